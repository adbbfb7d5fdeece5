// SPDX-License-Identifier: Apache-2.0
// The readers of the files readers and IT write by hand — hanging protocols and saved searches — on any bytes:
// what they accept, written back and read again, is the same; a refusal is an error naming the problem.
#include "fuzztarget.h"

#include "spectrum/stores/reading/hangingprotocol.h"
#include "spectrum/stores/reading/savedsearch.h"

#include <QByteArray>

#include <cstdlib>

SPECTRUM_FUZZ_TARGET(userfiles)
{
    using namespace spectrum;
    const QByteArray json(reinterpret_cast<const char *>(data), qsizetype(size));
    const Result<SavedSearches> searches = SavedSearches::fromJson(json);
    if (searches.isOk()) {
        const Result<SavedSearches> again = SavedSearches::fromJson(searches.value().toJson());
        if (!again.isOk() || again.value().searches.size() != searches.value().searches.size())
            std::abort();  // what was read must be written so that it reads back
        for (qsizetype i = 0; i < searches.value().searches.size(); ++i) {
            const SavedSearch &s = searches.value().searches[i];
            if (!(again.value().searches[i] == s) || s.validate().isError() || s.query(QDate(2026, 1, 1)).validate().isError())
                std::abort();
        }
    } else if (searches.error().message().isEmpty()) {
        std::abort();
    }
    const Result<ProtocolSet> protocols = ProtocolSet::fromJson(json);
    if (protocols.isOk()) {
        const Result<ProtocolSet> again = ProtocolSet::fromJson(protocols.value().toJson());
        if (!again.isOk() || again.value().protocols.size() != protocols.value().protocols.size())
            std::abort();
        // Placed on a small study: whatever the rules say, a plan within its grid.
        StudySummary study;
        study.identity.studyInstanceUid = QStringLiteral("1.2.3");
        study.modalities = {QStringLiteral("CT")};
        SeriesSummary series;
        series.seriesInstanceUid = QStringLiteral("1.2.3.4");
        series.modality = QStringLiteral("CT");
        series.description = QStringLiteral("HEAD AX");
        series.instances.resize(3);
        study.series = {series, series};
        study.series[1].seriesInstanceUid = QStringLiteral("1.2.3.5");
        for (int i = 0; i < protocols.value().protocols.size() && i < 8; ++i) {
            const HangingPlan plan = protocols.value().plan(i, study, &study);
            if (plan.rows < 1 || plan.columns < 1 || plan.rows > 4 || plan.columns > 4 || plan.panes.size() > plan.rows * plan.columns)
                std::abort();
        }
    } else if (protocols.error().message().isEmpty()) {
        std::abort();
    }
    return 0;
}
