// SPDX-License-Identifier: Apache-2.0
#include "spectrum/stores/exchange/demoseeder.h"

namespace spectrum {

ResultJob<int> *seedDemoStudies(BlobStore *store, const DemoOptions &options)
{
    // Runs on a pool thread: the store's jobs are created and run synchronously right there.
    BlobStore *target = store;
    return makeJob<int>([target, options](const CancelToken &cancel) -> Result<int> {
        int committed = 0;
        Error e = DemoArchive::generate(options, [&](DemoInstance &&instance) -> Error {
            const QString key = instance.identity.sopInstanceUid;
            Result<BlobWriterPtr> writer = runSync(target->reserve(key, instance.bytes.size()));
            if (!writer.isOk())
                return writer.error();
            if (Error w = writer.value()->writeAt(0, instance.bytes.constData(), instance.bytes.size()); w.isError())
                return w;
            Result<BlobInfo> info = runSync(target->commit(writer.value()));
            if (!info.isOk())
                return info.error();
            ++committed;
            return Error();
        }, cancel);
        if (e.isError())
            return e.withContext(QStringLiteral("demo studies"));
        return committed;
    });
}

} // namespace spectrum
