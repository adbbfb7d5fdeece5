// SPDX-License-Identifier: Apache-2.0
#pragma once
// The kernel's boot ID: what a process wrote and did not sync survives the process (even kill -9) as long as
// the kernel that holds it in its page cache is up. Data written without a sync can be tagged with this ID and
// trusted again only under the same ID.

#include <QString>

namespace spectrum {

/// /proc/sys/kernel/random/boot_id, read once; empty where the system has none (then: always sync).
const QString &kernelBootId();

} // namespace spectrum
