// SPDX-License-Identifier: Apache-2.0
#pragma once
// Where a sign-in's tokens are kept between programs: the desktop's keyring (the freedesktop Secret Service:
// GNOME Keyring, KWallet, KeePassXC) when the session has one, else sealed in sign-in.json beside the store
// configuration (the stores' own key, owner-only). Each call blocks — a D-Bus round trip, or the keyring asking the
// reader to unlock it — so SignIn calls them on a worker thread, one after the other. Thread-safe.
//
// Whichever kept its tokens later wins when both hold some (a command run over SSH, with no keyring, renewed into the
// file); writing to the keyring takes the provider's tokens out of the file, so no second copy of a refresh token
// stays on the disk.

#include "spectrum/core/error.h"
#include "spectrum/core/result.h"
#include "spectrum/stores/archives/storeconfig.h"
#include "spectrum/transfer/oidc.h"

#include <memory>
#include <optional>

namespace spectrum {

/// An exclusive lock on `path` (flock) while it lives; none when another process holds it. What every program of
/// the user takes to write the vault or renew (one refresh token, rotated, must never be used twice).
class FileLock
{
public:
    /// `wait`: up to two seconds (another program's renewal is a round trip to the provider); otherwise not at all.
    explicit FileLock(const QString &path, bool wait = false);
    ~FileLock() { release(); }
    /// Lets go before the lock itself goes (a renewal's lock, held by its callback until the job is deleted).
    void release();
    FileLock(const FileLock &) = delete;
    FileLock &operator=(const FileLock &) = delete;
    bool held() const { return m_fd >= 0; }

private:
    int m_fd = -1;
};

class TokenVault
{
public:
    /// The vault of the sign-ins of `config`'s stores: keyed by its folder (two configurations never share one).
    explicit TokenVault(StoreConfigFile config);

    /// The tokens kept for `providerKey` (OidcProvider::key()); nullopt when none are. An error only when they
    /// exist but cannot be read (the keyring refused to unlock, the file is damaged). A keyring copy older than a
    /// sign-out another program made where there was no keyring (a command over SSH, which leaves a note of it in
    /// the file) is ended too: taken out of the keyring and given back through `ended`, for the provider to revoke.
    Result<std::optional<OidcTokens>> read(const QString &providerKey, std::optional<OidcTokens> *ended = nullptr) const;
    /// Keeps `tokens` for `providerKey`; empty tokens (no access and no refresh token) forget it everywhere.
    /// Says where (keepingPlace()) through `where` when given.
    Error write(const QString &providerKey, const OidcTokens &tokens, QString *where = nullptr) const;

    /// What an earlier program kept for `providerKey` (the keyring's and the file's, whatever the policy says),
    /// taken out of both: for a workstation whose policy keeps none, to revoke. nullopt when nothing was kept.
    Result<std::optional<OidcTokens>> takeLeftover(const QString &providerKey) const;

    /// sign-in.json, and its lock file: held by a program renewing (one refresh token, rotated) or writing.
    QString filePath() const;
    QString lockPath() const { return filePath() + QStringLiteral(".lock"); }

    /// Whether a Secret Service answers on this session's bus (asked once per process; SPECTRUM_KEYRING=off
    /// says not to use one).
    static bool keyringPresent();

private:
    /// What the keyring and the file hold (the newer), whatever the policy.
    Result<std::optional<OidcTokens>> readKept(const QString &providerKey, std::optional<OidcTokens> *ended = nullptr) const;
    /// The file's copy, unsealed (its JSON); nullopt when there is none.
    Result<std::optional<QByteArray>> readFile(const QString &providerKey) const;
    /// Seals `tokens` into the file; empty tokens take the provider's out — or, with `note`, leave a note of the
    /// sign-out (a keyring copy older than it is ended by the next program that reaches the keyring).
    Error writeFile(const QString &providerKey, const OidcTokens &tokens, bool note = false) const;

    StoreConfigFile m_config;
};

namespace secretservice {
// The keyring (libsecret, synchronous: call on a worker thread). `folder` and `providerKey` name the item.
bool present();
Result<std::optional<QByteArray>> lookup(const QString &folder, const QString &providerKey);
Error store(const QString &folder, const QString &providerKey, const QString &label, const QByteArray &secret);
Error clear(const QString &folder, const QString &providerKey);
} // namespace secretservice

} // namespace spectrum
