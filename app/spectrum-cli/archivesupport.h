// SPDX-License-Identifier: Apache-2.0
#pragma once
// What the archive commands share: the store configuration option, the registry over it and the cache, and the
// study query options of find and prefetch.

#include "spectrum/core/dicomquery.h"
#include "spectrum/stores/archives/storeconfig.h"
#include "spectrum/stores/archives/storeregistry.h"

#include <QCommandLineParser>

#include <memory>

namespace spectrum::cli {

void addConfigOption(QCommandLineParser &p);
Result<StoreConfigFile> loadConfig(const QCommandLineParser &p);
/// The registry over the configuration and the workstation's cache (opened only when `withCache`).
Result<std::unique_ptr<StoreRegistry>> registry(const StoreConfigFile &config, bool withCache);
/// --patient-name, --patient-id, --date, --modality, --accession, --description, --limit.
void addQueryOptions(QCommandLineParser &p);
/// The query those options describe; InvalidArgument (saying which) for a malformed one.
Result<DicomQuery> queryFrom(const QCommandLineParser &p);
/// Whether a study's patient name is what --patient-name means, as the study browser reads a typed name (plain
/// words: the start of any part of the name, any case or accent; a pattern with * or ?: DICOM's rules). Every name
/// without --patient-name.
bool nameAsTyped(const QCommandLineParser &p, const QString &patientName);

} // namespace spectrum::cli
