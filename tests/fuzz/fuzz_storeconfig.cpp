// SPDX-License-Identifier: Apache-2.0
// The store configuration reader on any file: a configuration, or an error naming the problem.
#include "fuzztarget.h"

#include "spectrum/stores/archives/storeconfig.h"

#include <QByteArray>

SPECTRUM_FUZZ_TARGET(storeconfig)
{
    using namespace spectrum;
    const QByteArray json(reinterpret_cast<const char *>(data), qsizetype(size));
    const Result<StoreConfigFile> config = StoreConfigFile::parse(json, QStringLiteral("fuzz/stores.json"));
    if (config.isOk()) {
        for (const StoreConfig &s : config.value().stores())
            (void)config.value().find(s.name);
    }
    return 0;
}
