#include "workstation.h"

#include "spectrum/core/logging.h"
#include "spectrum/stores/demoseeder.h"

#include <QThreadPool>

namespace spectrum {

Workstation::Workstation(Options options, QObject *parent) : QObject(parent), m_options(std::move(options))
{
    m_refreshTimer.setSingleShot(true);
    m_refreshTimer.setInterval(250);
    connect(&m_refreshTimer, &QTimer::timeout, this, &Workstation::refreshStudies);
}

Workstation::~Workstation()
{
    // Jobs on the pool use the store: stop them and let them drain before it goes away.
    if (m_openJob)
        m_openJob->cancel();
    if (m_seedJob)
        m_seedJob->cancel();
    if (m_refreshJob)
        m_refreshJob->cancel();
    blockingPool()->waitForDone();
}

void Workstation::start()
{
    Q_EMIT statusMessage(tr("Opening the local cache %1…").arg(m_options.cacheDirectory));
    auto *job = FileStore::openJob(m_options.cacheDirectory, m_options.diskBudgetBytes);
    m_openJob = job;
    connect(job, &Job::finished, this, [this, job] {
        m_openJob = nullptr;
        if (job->hasError()) {
            Q_EMIT startFailed(job->error());
            return;
        }
        m_store = job->result().value();
        connect(m_store.get(), &BlobStore::blobCommitted, this, [this] { m_refreshTimer.start(); });
        connect(m_store.get(), &BlobStore::blobRemoved, this, [this] { m_refreshTimer.start(); });
        Q_EMIT started();
        if (m_options.seedDemoWhenEmpty && m_store->usage().blobs == 0)
            seedDemo();
        refreshStudies();
    });
    job->start(ExecutionPolicy::Async);
}

const StudySummary *Workstation::findStudy(const QString &uidOrAlias) const
{
    QString uid = uidOrAlias;
    if (const auto demo = DemoArchive::fromAlias(uidOrAlias))
        uid = DemoArchive::studyUid(*demo);
    for (const StudySummary &s : m_studies) {
        if (s.identity.studyInstanceUid == uid)
            return &s;
    }
    return nullptr;
}

void Workstation::seedDemo()
{
    Q_EMIT statusMessage(tr("Preparing the demo studies…"));
    auto *job = seedDemoStudies(m_store.get(), m_options.demo);
    m_seedJob = job;
    connect(job, &Job::finished, this, [this, job] {
        m_seedJob = nullptr;
        if (job->hasError() && job->error().code() != ErrorCode::Cancelled) {
            Q_EMIT errorOccurred(job->error());
        } else if (!job->hasError()) {
            Q_EMIT statusMessage(tr("Demo studies ready: %n image(s)", nullptr, job->result().value()));
        }
        refreshStudies();
        Q_EMIT seedingFinished();
    });
    job->start(ExecutionPolicy::Async);
}

void Workstation::refreshStudies()
{
    if (m_refreshJob) {  // one at a time; the newest state wins
        m_refreshAgain = true;
        return;
    }
    auto *job = loadStudies(m_store.get());
    m_refreshJob = job;
    connect(job, &Job::finished, this, [this, job] {
        m_refreshJob = nullptr;
        if (job->hasError()) {
            if (job->error().code() != ErrorCode::Cancelled)
                Q_EMIT errorOccurred(job->error());
            return;
        }
        m_studies = job->result().value();
        Q_EMIT studiesChanged();
        if (m_refreshAgain) {
            m_refreshAgain = false;
            refreshStudies();
        }
    });
    job->start(ExecutionPolicy::Async);
}

} // namespace spectrum
