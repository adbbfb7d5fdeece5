// SPDX-License-Identifier: Apache-2.0
#pragma once
// StsSession: an S3 store's temporary credentials for the reader, from the store's security token service (AWS STS,
// MinIO, SeaweedFS, Ceph RGW) through AssumeRoleWithWebIdentity: the ID token of the reader's sign-in (oidc.h) is
// traded for an access key, a secret and a session token that expire within the hour. No long-lived key is kept on
// the workstation, and what a reader may read is what the hospital's policy gives the role their sign-in takes.
//
// The credentials are got when a request first needs them, again a few minutes before they expire (while the old
// ones still sign), and again when the store refuses them (revoked); forget() drops them at once (signed out). The
// ID token travels in the body of a POST, never in a URL or a log. Errors say what the service said and what to do:
// sign in again (an expired or refused ID token), or ask the hospital's admin (the role refused to this reader).

#include "spectrum/core/resultjob.h"
#include "spectrum/transfer/s3client.h"

#include <QDateTime>
#include <QMutex>
#include <QObject>
#include <QPointer>
#include <QTimer>
#include <QUrl>

#include <functional>
#include <memory>
#include <optional>

class QNetworkAccessManager;

namespace spectrum {

struct StsSettings
{
    /// The service's address: the store's own for MinIO, SeaweedFS and Ceph RGW; https://sts.amazonaws.com (or a
    /// region's) for AWS.
    QUrl url;
    QString caFile;           ///< HTTPS: PEM certificates to trust besides the system's
    /// The role to take (arn:aws:iam::…:role/…); empty where the service chooses it from the token's claims (MinIO).
    QString roleArn;
    /// Who took the role, in the store's own records: the reader (letters, digits and =,.@_- only; 2–64).
    QString sessionName = QStringLiteral("spectrum");
    int durationSeconds = 3600;  ///< asked for; the service may give less (never past the ID token's expiry)
    int timeoutMs = 30000;
};

struct StsCredentials
{
    s3::Credentials credentials;  ///< access key, secret and session token (no region: the store's)
    QDateTime expires;            ///< UTC
    QString assumedRole;          ///< the AssumedRoleUser's ARN, when said
    QString subject;              ///< SubjectFromWebIdentityToken, when said
};

namespace s3 {
/// An AssumeRoleWithWebIdentityResponse: the credentials in it, all three and an expiry, or a Protocol error.
Result<StsCredentials> parseAssumedRole(const QByteArray &xml);
/// Our error for an STS answer with HTTP `status` (an ErrorResponse): in words a reader or an admin can act on.
Error stsErrorFor(int status, const QByteArray &body, const QString &service, const QString &roleArn);
/// `name` made a RoleSessionName: characters outside [A-Za-z0-9=,.@_-] become '-', 2 to 64 of them.
QString roleSessionName(const QString &name);
} // namespace s3

class StsSession : public QObject
{
    Q_OBJECT
public:
    /// Gives the reader's ID token, valid a while more (the sign-in renewed first when need be), or why not (not
    /// signed in: an Authentication error that says how to sign in). Called on this session's thread.
    using IdentityTokenSource = std::function<ResultJob<QString> *()>;

    /// Who takes the role, asked at each renewal (the reader signed in then): StsSettings::sessionName.
    using SessionNameSource = std::function<QString()>;

    StsSession(StsSettings settings, IdentityTokenSource identityToken, SessionNameSource sessionName = {}, QObject *parent = nullptr);
    ~StsSession() override;

    const StsSettings &settings() const { return m_settings; }
    /// What S3 clients on any thread sign with (S3Endpoint::session): these credentials while this session lives,
    /// none after (their requests then fail, never sign with something stale).
    std::shared_ptr<S3Session> handle() const;
    /// Valid at least a minute more (a tenth of their life, when given for less than ten minutes): the credentials;
    /// else none. Any thread. Five minutes before they expire (the last fifth of a short life), new ones are asked for
    /// behind the requests.
    std::optional<s3::Credentials> current() const;
    /// When the credentials held expire (invalid: none held). Any thread.
    QDateTime expires() const;
    /// Drops the credentials held (the reader signed out): the next request asks for new ones with a new token.
    void forget();
    /// Forgets a failed renewal (someone signed in since): the next request asks again at once.
    void forgetFailure() { m_failedAt = 0; }

    /// One AssumeRoleWithWebIdentity with `token` over `manager`.
    static ResultJob<StsCredentials> *assumeRole(QNetworkAccessManager *manager, const StsSettings &settings, const QString &token);

Q_SIGNALS:
    /// A renewal ended (`code` ErrorCode::None and an empty message: new credentials held).
    void renewalEnded(int code, const QString &message);

private:
    class Handle;
    /// Gets new credentials unless those refused (`refusedKey`) are replaced already; on this session's thread.
    void renewHere(const QString &refusedKey);
    void finishRenewal(const Error &error);

    StsSettings m_settings;
    IdentityTokenSource m_identityToken;
    SessionNameSource m_sessionName;
    QNetworkAccessManager *m_manager;
    std::shared_ptr<Handle> m_handle;
    mutable QMutex m_mutex;
    std::optional<StsCredentials> m_held;  ///< under m_mutex
    QDateTime m_heldSince;                 ///< under m_mutex: when they came
    mutable bool m_aheadQueued = false;    ///< under m_mutex: a renewal ahead of expiry is on its way
    qint64 m_aheadNotBefore = 0;           ///< under m_mutex: after a failed renewal, the next ahead of expiry not before (ms)
    bool m_renewing = false;
    QTimer m_deadline;                     ///< a renewal is given up after the service's timeout and half a minute
    qint64 m_failedAt = 0;                 ///< when the last renewal failed (ms since the epoch; 0: it did not)
    Error m_failure;
    quint64 m_generation = 0;              ///< a new one at each forget(): a renewal begun before is dropped
};

} // namespace spectrum
