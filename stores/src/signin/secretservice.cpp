// SPDX-License-Identifier: Apache-2.0
// The desktop's keyring through libsecret's synchronous calls (each blocks for a D-Bus round trip, or until the
// reader unlocks the keyring at its prompt): SignIn calls them on a worker thread only.
#include "signin/tokenvault.h"

#include <QDir>
#include <QFile>

#include <cstring>

// GLib names a structure field "signals", which Qt's keywords would turn into "public".
#pragma push_macro("signals")
#undef signals
#include <libsecret/secret.h>
#pragma pop_macro("signals")

namespace spectrum::secretservice {

namespace {

/// The items' kind, as Seahorse and `secret-tool` show it: the configuration's folder and the provider (issuer,
/// client, audience) name one sign-in.
const SecretSchema *schema()
{
    static const SecretSchema s = [] {
        SecretSchema x = {};
        x.name = "org.spectrum.SignIn";
        x.flags = SECRET_SCHEMA_NONE;
        x.attributes[0].name = "folder";
        x.attributes[0].type = SECRET_SCHEMA_ATTRIBUTE_STRING;
        x.attributes[1].name = "provider";
        x.attributes[1].type = SECRET_SCHEMA_ATTRIBUTE_STRING;
        return x;
    }();
    return &s;
}

Error keyringError(GError *e, const QString &what)
{
    const QString message = QStringLiteral("the desktop's keyring %1: %2").arg(what, e ? QString::fromUtf8(e->message) : QStringLiteral("unknown error"));
    const bool refused = e && e->domain == G_IO_ERROR && (e->code == G_IO_ERROR_CANCELLED || e->code == G_IO_ERROR_PERMISSION_DENIED);
    if (e)
        g_error_free(e);
    return Error(refused ? ErrorCode::Authentication : ErrorCode::Io, message);
}

} // namespace

bool present()
{
    // No session bus, no keyring — and never one started for the asking (GLib would launch a bus for a program
    // with a display and none).
    const QString runtime = qEnvironmentVariable("XDG_RUNTIME_DIR");
    if (qEnvironmentVariableIsEmpty("DBUS_SESSION_BUS_ADDRESS") && (runtime.isEmpty() || !QFile::exists(runtime + QStringLiteral("/bus"))))
        return false;
    GError *error = nullptr;
    GDBusConnection *bus = g_bus_get_sync(G_BUS_TYPE_SESSION, nullptr, &error);
    if (!bus) {
        if (error)
            g_error_free(error);
        return false;
    }
    auto ask = [bus](const char *method, const char *reply) -> GVariant * {
        return g_dbus_connection_call_sync(bus, "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", method,
                                           std::strcmp(method, "NameHasOwner") == 0 ? g_variant_new("(s)", "org.freedesktop.secrets") : nullptr,
                                           G_VARIANT_TYPE(reply), G_DBUS_CALL_FLAGS_NO_AUTO_START, 5000, nullptr, nullptr);
    };
    // A keyring running in the session; or one the session bus would start, in a graphical session (where it can
    // ask the reader to unlock it) — not over SSH, where it would start locked with no one to unlock it.
    bool found = false;
    if (GVariant *owned = ask("NameHasOwner", "(b)")) {
        gboolean has = FALSE;
        g_variant_get(owned, "(b)", &has);
        found = has;
        g_variant_unref(owned);
    }
    if (!found && (!qEnvironmentVariableIsEmpty("DISPLAY") || !qEnvironmentVariableIsEmpty("WAYLAND_DISPLAY"))) {
        if (GVariant *names = ask("ListActivatableNames", "(as)")) {
            GVariantIter *it = nullptr;
            const gchar *name = nullptr;
            g_variant_get(names, "(as)", &it);
            while (!found && g_variant_iter_loop(it, "&s", &name))
                found = std::strcmp(name, "org.freedesktop.secrets") == 0;
            g_variant_iter_free(it);
            g_variant_unref(names);
        }
    }
    g_object_unref(bus);
    return found;
}

Result<std::optional<QByteArray>> lookup(const QString &folder, const QString &providerKey)
{
    GError *error = nullptr;
    gchar *secret = secret_password_lookup_sync(schema(), nullptr, &error, "folder", folder.toUtf8().constData(),
                                                "provider", providerKey.toUtf8().constData(), nullptr);
    if (error)
        return keyringError(error, QStringLiteral("could not be read"));
    if (!secret)
        return std::optional<QByteArray>();
    const QByteArray value(secret);
    secret_password_free(secret);
    return std::optional<QByteArray>(value);
}

Error store(const QString &folder, const QString &providerKey, const QString &label, const QByteArray &secret)
{
    GError *error = nullptr;
    if (!secret_password_store_sync(schema(), SECRET_COLLECTION_DEFAULT, label.toUtf8().constData(), secret.constData(), nullptr, &error,
                                    "folder", folder.toUtf8().constData(), "provider", providerKey.toUtf8().constData(), nullptr))
        return keyringError(error, QStringLiteral("did not keep the sign-in"));
    return Error();
}

Error clear(const QString &folder, const QString &providerKey)
{
    GError *error = nullptr;
    secret_password_clear_sync(schema(), nullptr, &error, "folder", folder.toUtf8().constData(), "provider", providerKey.toUtf8().constData(), nullptr);
    if (error)
        return keyringError(error, QStringLiteral("did not forget the sign-in"));
    return Error();
}

} // namespace spectrum::secretservice
