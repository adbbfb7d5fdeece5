#pragma once
// The study list: one row per study, with what a radiologist scans for.

#include "spectrum/stores/studycatalog.h"

#include <QAbstractTableModel>

namespace spectrum {

class StudyListModel : public QAbstractTableModel
{
    Q_OBJECT
public:
    enum Column { Patient, PatientId, Date, Modality, Description, Images, ColumnCount };
    enum Role { StudyUidRole = Qt::UserRole + 1 };

    explicit StudyListModel(QObject *parent = nullptr);

    void setStudies(const QList<StudySummary> &studies);
    const StudySummary *study(int row) const;

    int rowCount(const QModelIndex &parent = QModelIndex()) const override;
    int columnCount(const QModelIndex &parent = QModelIndex()) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

    /// "20240102" → "2024-01-02" (ISO, unambiguous in every locale).
    static QString formatDate(const QString &dicomDate);

private:
    QList<StudySummary> m_studies;
};

} // namespace spectrum
