// SPDX-License-Identifier: Apache-2.0
#pragma once
// How the hospital wants sign-ins handled on a workstation: the "signIn" section of the store configuration —
// {"keep": "program", "idleMinutes": 15}. A shared reading-room workstation keeps no reader's sign-in beyond the
// program that made it, and signs the reader out (revoking at the provider, audited) and hides the patient's images
// after some minutes without a key or the mouse. The system configuration's (/etc/spectrum/stores.json) wins: when the
// hospital set one, a user's "signIn" is ignored — as its "audit" is.

#include "spectrum/core/result.h"

#include <QJsonObject>
#include <QString>

namespace spectrum {

struct SignInPolicy
{
    /// "keep": "desktop" (the default): the tokens are kept in the desktop's keyring, else sealed beside the
    /// configuration, and the next program goes on with them. "program": held in the memory of the program that
    /// signed in only — gone when it ends; nothing is read from or written to the keyring or the disk (what an earlier
    /// program kept there is taken out), and spectrum-cli login refuses, saying why.
    bool keepBetweenPrograms = true;
    /// "idleMinutes": the workstation signs every reader out and hides the studies after this long without input;
    /// 0: never. Fractions of a minute are allowed.
    double idleMinutes = 0;
    bool fromSystem = false;  ///< set by the system configuration: a user's cannot change it

    bool isSet() const { return !keepBetweenPrograms || idleMinutes > 0; }
    /// "kept by the program alone; signed out after 15 minutes without use" — for messages.
    QString summary() const;
    static Result<SignInPolicy> fromJson(const QJsonObject &json, const QString &where);
    QJsonObject toJson() const;
};

} // namespace spectrum
