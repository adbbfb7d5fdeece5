// SPDX-License-Identifier: Apache-2.0
#pragma once
// The archives the tests start (Orthanc, testsupport.h) as the product sees them: endpoints for the transfer
// clients, and store configuration entries for the registry and the workstation. Header-only, so that a test
// links only the libraries whose types it uses (transfer's endpoints, or stores' StoreConfig).

#include "testsupport.h"

#if __has_include("spectrum/transfer/dicomweb.h")
#include "spectrum/transfer/dicomweb.h"
#include "spectrum/transfer/dimse.h"
#endif
#if __has_include("spectrum/stores/archives/storeconfig.h")
#include "spectrum/stores/archives/storeconfig.h"
#endif

namespace spectrum::test {

#if __has_include("spectrum/transfer/dicomweb.h")
/// Orthanc's DICOMweb service, with HTTP Basic when a user is given.
inline DicomWebEndpoint dicomWebEndpoint(const OrthancProcess &orthanc, const QString &user = {}, const QString &password = {})
{
    DicomWebEndpoint ep;
    ep.base = QUrl(orthanc.dicomWebUrl());
    if (!user.isEmpty()) {
        ep.auth.kind = HttpAuth::Kind::Basic;
        ep.auth.user = user;
        ep.auth.password = password;
    }
    ep.timeoutMs = 30000;
    return ep;
}

/// Orthanc's DIMSE service, called as `ourAeTitle`.
inline DimseEndpoint dimseEndpoint(const OrthancProcess &orthanc, const QString &ourAeTitle)
{
    DimseEndpoint ep;
    ep.host = QStringLiteral("127.0.0.1");
    ep.port = orthanc.dicomPort();
    ep.calledAeTitle = orthanc.aeTitle();
    ep.callingAeTitle = ourAeTitle;
    ep.timeoutSeconds = 20;
    return ep;
}
#endif

#if __has_include("spectrum/stores/archives/storeconfig.h")
/// A DICOMweb store named `name` at `url` (no authentication: add it to the entry).
inline StoreConfig dicomWebStore(const QString &name, const QString &url)
{
    DicomWebSettings web;
    web.url = url;
    return StoreConfig(name, web);
}

/// A DIMSE store named `name` on loopback at `port`, called `aeTitle`.
inline StoreConfig dimseStore(const QString &name, quint16 port, const QString &aeTitle)
{
    DimseSettings dimse;
    dimse.host = QStringLiteral("127.0.0.1");
    dimse.port = port;
    dimse.aeTitle = aeTitle;
    return StoreConfig(name, dimse);
}
#endif

} // namespace spectrum::test
