// SPDX-License-Identifier: Apache-2.0
// What the sign-in checks by itself, without a provider: PKCE's S256 as RFC 7636 computes it (its own example), and
// an ID token refused when it was issued by another provider, for another client, has expired, carries another
// sign-in's nonce or names no one — each said in words. (The flow against a real provider: tst_signin.)

#include "spectrum/transfer/oidc.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QTest>

using namespace spectrum;

namespace {

QString jwt(const QJsonObject &claims)
{
    auto part = [](const QJsonObject &o) {
        return QString::fromLatin1(QJsonDocument(o).toJson(QJsonDocument::Compact).toBase64(QByteArray::Base64UrlEncoding | QByteArray::OmitTrailingEquals));
    };
    return part(QJsonObject{{QStringLiteral("alg"), QStringLiteral("RS256")}}) + QLatin1Char('.') + part(claims) + QStringLiteral(".c2lnbmF0dXJl");
}

QJsonObject good()
{
    return QJsonObject{{QStringLiteral("iss"), QStringLiteral("https://sso.hospital.test/")},
                       {QStringLiteral("aud"), QJsonArray{QStringLiteral("spectrum")}},
                       {QStringLiteral("sub"), QStringLiteral("8f2c")},
                       {QStringLiteral("exp"), double(QDateTime::currentSecsSinceEpoch() + 600)},
                       {QStringLiteral("nonce"), QStringLiteral("n-123")},
                       {QStringLiteral("name"), QStringLiteral("Dr. Anna Smith")},
                       {QStringLiteral("given_name"), QStringLiteral("Anna")},
                       {QStringLiteral("family_name"), QStringLiteral("Smith")}};
}

} // namespace

class tst_Oidc : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void pkceAsRfc7636Computes()
    {
        // RFC 7636, Appendix B.
        QCOMPARE(OidcClient::codeChallenge(QStringLiteral("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk")),
                 QStringLiteral("E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"));
    }

    void aGoodIdTokenGivesItsClaims()
    {
        Result<QJsonObject> c = OidcClient::checkIdToken(jwt(good()), QStringLiteral("https://sso.hospital.test"), QStringLiteral("spectrum"), QStringLiteral("n-123"));
        QVERIFY2(c.isOk(), qPrintable(c.error().message()));
        OidcTokens t;
        t.claims = c.value();
        QCOMPARE(t.displayName(), QStringLiteral("Dr. Anna Smith"));
        QCOMPARE(t.personName(), QStringLiteral("Smith^Anna"));
        // A single audience as a string is the same.
        QJsonObject single = good();
        single.insert(QStringLiteral("aud"), QStringLiteral("spectrum"));
        QVERIFY(OidcClient::checkIdToken(jwt(single), QStringLiteral("https://sso.hospital.test/"), QStringLiteral("spectrum"), QStringLiteral("n-123")).isOk());
        // Several audiences with this program as the one it was issued to (azp): taken.
        QJsonObject several = good();
        several.insert(QStringLiteral("aud"), QJsonArray{QStringLiteral("spectrum"), QStringLiteral("https://pacs.hospital.test")});
        several.insert(QStringLiteral("azp"), QStringLiteral("spectrum"));
        QVERIFY(OidcClient::checkIdToken(jwt(several), QStringLiteral("https://sso.hospital.test/"), QStringLiteral("spectrum"), QStringLiteral("n-123")).isOk());
    }

    void aWrongIdTokenIsRefused_data()
    {
        QTest::addColumn<QString>("claim");
        QTest::addColumn<QJsonValue>("value");
        QTest::addColumn<QString>("said");
        QTest::newRow("another issuer") << "iss" << QJsonValue(QStringLiteral("https://evil.test/")) << "issued by";
        QTest::newRow("another client") << "aud" << QJsonValue(QJsonArray{QStringLiteral("someone-else")}) << "not meant for this program";
        QTest::newRow("expired") << "exp" << QJsonValue(double(QDateTime::currentSecsSinceEpoch() - 3600)) << "expired";
        QTest::newRow("another nonce") << "nonce" << QJsonValue(QStringLiteral("replayed")) << "nonce";
        QTest::newRow("no subject") << "sub" << QJsonValue(QString()) << "no subject";
        QTest::newRow("issued to another program") << "azp" << QJsonValue(QStringLiteral("someone-else")) << "issued to another program";
        QTest::newRow("several audiences, none said") << "aud" << QJsonValue(QJsonArray{QStringLiteral("spectrum"), QStringLiteral("billing")}) << "several audiences";
    }
    void aWrongIdTokenIsRefused()
    {
        QFETCH(QString, claim);
        QFETCH(QJsonValue, value);
        QFETCH(QString, said);
        QJsonObject claims = good();
        claims.insert(claim, value);
        Result<QJsonObject> c = OidcClient::checkIdToken(jwt(claims), QStringLiteral("https://sso.hospital.test/"), QStringLiteral("spectrum"), QStringLiteral("n-123"));
        QVERIFY(!c.isOk());
        QCOMPARE(c.error().code(), ErrorCode::Authentication);
        QVERIFY2(c.error().message().contains(said), qPrintable(c.error().message()));
    }

    void notAJwtIsRefused()
    {
        QVERIFY(!OidcClient::checkIdToken(QStringLiteral("opaque-token"), QStringLiteral("https://sso.hospital.test/"), QStringLiteral("spectrum"), QString()).isOk());
        QVERIFY(!OidcClient::checkIdToken(QStringLiteral("a.bm90IGpzb24.c"), QStringLiteral("https://sso.hospital.test/"), QStringLiteral("spectrum"), QString()).isOk());
    }

    void aProviderOverPlainHttpElsewhereIsRefused()
    {
        OidcProvider p;
        p.issuer = QUrl(QStringLiteral("http://sso.hospital.test/realms/x"));
        p.clientId = QStringLiteral("spectrum");
        OidcClient client(p);
        const Error e = runSync(client.discover()).error();
        QCOMPARE(e.code(), ErrorCode::InvalidArgument);
        QVERIFY2(e.message().contains(QLatin1String("https://")), qPrintable(e.message()));
    }
};

QTEST_GUILESS_MAIN(tst_Oidc)
#include "tst_oidc.moc"
