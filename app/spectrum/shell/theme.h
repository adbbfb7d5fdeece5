// SPDX-License-Identifier: Apache-2.0
#pragma once
// The reading-room look: dark, low-glare, neutral greys so that the image is the brightest thing on screen.

class QApplication;

namespace spectrum {
void applyReadingRoomTheme(QApplication &app);
} // namespace spectrum
