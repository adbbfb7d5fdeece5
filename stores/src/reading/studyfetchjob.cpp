// SPDX-License-Identifier: Apache-2.0
#include "spectrum/stores/reading/studyfetchjob.h"

#include "spectrum/stores/reading/studystreamer.h"

#include <QStringList>

namespace spectrum {

namespace {
QString megabytes(qint64 bytes)
{
    return QObject::tr("%1 MB").arg(bytes / 1e6, 0, 'f', bytes < 10'000'000 ? 1 : 0);
}
} // namespace

StudyFetchJob::StudyFetchJob(StudyStreamer *streamer, const QString &title) : Job(streamer), m_streamer(streamer)
{
    setAutoDelete(false);  // the streamer's: it goes with the study
    setTitle(title);
    connect(streamer, &StudyStreamer::progress, this, &StudyFetchJob::follow);
    connect(streamer, &StudyStreamer::listed, this, &StudyFetchJob::follow);
    connect(streamer, &StudyStreamer::laidOut, this, &StudyFetchJob::follow);  // before the listing: as laid out so far
    // Paused or going on, whoever did it (the reader here, the prefetcher holding a prior back while the reader
    // waits for another study): the row says so.
    connect(streamer, &StudyStreamer::stoppedChanged, this, &StudyFetchJob::follow);
    connect(streamer, &StudyStreamer::failed, this, [this](const Error &error) {
        if (isFinished())
            return;
        setStatusText(tr("failed: %1").arg(error.toString()));
        emitResult(error);  // nothing will be fetched
    });
    follow();
}

StudyFetchJob::~StudyFetchJob()
{
    // The study closed while it arrived: a started job still ends once, for whoever waits for it.
    if (isStarted() && !isFinished())
        emitResult(Error(ErrorCode::Cancelled, tr("the study was closed")));
}

void StudyFetchJob::doStart()
{
    follow();
}

void StudyFetchJob::follow()
{
    StudyStreamer *s = m_streamer;
    if (!s || isFinished())
        return;
    setSuspended(s->isStopped());
    setBytesDone(s->bytesFetched());
    setProgress(s->hereCount(), s->expectedCount());
    const bool allHere = s->isListed() && s->cachedCount() >= s->total();
    QStringList parts{tr("%1 of %2 images").arg(s->hereCount()).arg(s->expectedCount()), megabytes(s->bytesFetched())};
    if (allHere)
        parts << tr("complete");
    else if (!s->isStopped() && !s->isComplete())
        parts << tr("%n at once", nullptr, s->fetching());
    if (s->failedCount() > 0)
        parts << tr("%n failed", nullptr, s->failedCount());
    setStatusText(parts.join(QStringLiteral(" · ")));
    // Everything left has failed for good: it waits for the reader (Retry), or for Cancel.
    setStalled(s->isComplete() && !allHere);
    setCanRetry(s->failedCount() > 0);
    if (allHere && isStarted())
        emitResult();
}

void StudyFetchJob::doCancel()
{
    if (!m_streamer)
        return;
    m_streamer->stop();  // what is cached stays
    follow();
    setStatusText(statusText() + tr(" · cancelled"));
}

bool StudyFetchJob::doSuspend()
{
    if (!m_streamer)
        return false;
    m_streamer->stop();  // stoppedChanged: followed
    return true;
}

bool StudyFetchJob::doResume()
{
    if (!m_streamer)
        return false;
    m_streamer->resume();  // its progress follows
    return true;
}

bool StudyFetchJob::doRetry()
{
    if (!m_streamer || m_streamer->failedCount() == 0)
        return false;
    m_streamer->retryFailed();  // progress follows
    return true;
}

} // namespace spectrum
