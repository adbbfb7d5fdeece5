#pragma once
// spectrum-cli's imaging commands (see imagingcommands.cpp): the filters, applying them, timing them.

#include <QStringList>

namespace spectrum::cli {

int cmdFilters(const QStringList &args);
int cmdFilter(const QStringList &args);
int cmdBench(const QStringList &args);

} // namespace spectrum::cli
