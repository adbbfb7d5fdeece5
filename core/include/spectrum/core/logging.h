// SPDX-License-Identifier: Apache-2.0
#pragma once
// Logging categories, one per module: enable with QT_LOGGING_RULES="spectrum.stores.debug=true".

#include <QLoggingCategory>

namespace spectrum {
Q_DECLARE_LOGGING_CATEGORY(lcCore)
Q_DECLARE_LOGGING_CATEGORY(lcStores)
Q_DECLARE_LOGGING_CATEGORY(lcTransfer)
Q_DECLARE_LOGGING_CATEGORY(lcImaging)
Q_DECLARE_LOGGING_CATEGORY(lcApp)
} // namespace spectrum
