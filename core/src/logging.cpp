// SPDX-License-Identifier: Apache-2.0
#include "spectrum/core/logging.h"

namespace spectrum {
Q_LOGGING_CATEGORY(lcCore, "spectrum.core", QtInfoMsg)
Q_LOGGING_CATEGORY(lcStores, "spectrum.stores", QtInfoMsg)
Q_LOGGING_CATEGORY(lcTransfer, "spectrum.transfer", QtInfoMsg)
Q_LOGGING_CATEGORY(lcImaging, "spectrum.imaging", QtInfoMsg)
Q_LOGGING_CATEGORY(lcApp, "spectrum.app", QtInfoMsg)
} // namespace spectrum
