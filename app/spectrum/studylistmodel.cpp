#include "studylistmodel.h"

#include <QBrush>
#include <QColor>

namespace spectrum {

StudyListModel::StudyListModel(QObject *parent) : QAbstractTableModel(parent) {}

void StudyListModel::setStudies(const QList<StudySummary> &studies)
{
    beginResetModel();
    m_studies = studies;
    endResetModel();
}

const StudySummary *StudyListModel::study(int row) const
{
    return row >= 0 && row < m_studies.size() ? &m_studies[row] : nullptr;
}

int StudyListModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : int(m_studies.size());
}

int StudyListModel::columnCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QString StudyListModel::formatDate(const QString &d)
{
    return d.size() == 8 ? d.left(4) + QLatin1Char('-') + d.mid(4, 2) + QLatin1Char('-') + d.right(2) : d;
}

QVariant StudyListModel::data(const QModelIndex &index, int role) const
{
    const StudySummary *s = study(index.row());
    if (!s)
        return QVariant();
    if (role == StudyUidRole)
        return s->identity.studyInstanceUid;
    if (role == Qt::ForegroundRole && s->identityConflict)
        return QBrush(QColor(255, 120, 90));
    if (role == Qt::ToolTipRole && s->identityConflict)
        return tr("Another patient's images carry the same Study Instance UID. They are listed separately; check before reading.");
    if (role == Qt::TextAlignmentRole && index.column() == Images)
        return int(Qt::AlignRight | Qt::AlignVCenter);
    if (role != Qt::DisplayRole)
        return QVariant();
    switch (index.column()) {
    case Patient:
        return DicomIdentity::displayName(s->identity.patientName) + (s->identityConflict ? tr("  ⚠ identity conflict") : QString());
    case PatientId: return s->identity.patientId;
    case Date: return formatDate(s->identity.studyDate);
    case Modality: return s->modalities.join(QLatin1Char('/'));
    case Description: return s->identity.studyDescription;
    case Images: return s->instanceCount;
    }
    return QVariant();
}

QVariant StudyListModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return QVariant();
    switch (section) {
    case Patient: return tr("Patient");
    case PatientId: return tr("Patient ID");
    case Date: return tr("Study date");
    case Modality: return tr("Modality");
    case Description: return tr("Description");
    case Images: return tr("Images");
    }
    return QVariant();
}

} // namespace spectrum
