// SPDX-License-Identifier: Apache-2.0
#pragma once
// What the left button does on an image: pan it, move the crosshair, or draw with one measurement tool
// (measurementtool.h). The Tools menu lists pan, the measurement tools in their registry's order, and the crosshair.

#include "spectrum/imaging/tools/measurementtool.h"

#include <optional>

namespace spectrum {

class ViewportTool
{
public:
    static ViewportTool pan() { return ViewportTool(Mode::Pan, nullptr); }
    static ViewportTool crosshair() { return ViewportTool(Mode::Crosshair, nullptr); }
    static ViewportTool measuring(AnnotationKind kind) { return ViewportTool(Mode::Measure, &measurementTool(kind)); }

    bool pans() const { return m_mode == Mode::Pan; }
    bool movesCrosshair() const { return m_mode == Mode::Crosshair; }
    /// The measurement tool it draws with; null when it pans or moves the crosshair.
    const MeasurementTool *measurement() const { return m_measurement; }

    /// Its stable name, kept in the settings: "Pan", "Crosshair", or the measurement's kind (kindId()).
    QString id() const
    {
        return m_measurement ? kindId(m_measurement->kind()) : m_mode == Mode::Crosshair ? QStringLiteral("Crosshair") : QStringLiteral("Pan");
    }
    static std::optional<ViewportTool> fromId(const QString &id)
    {
        if (id == QLatin1String("Pan"))
            return pan();
        if (id == QLatin1String("Crosshair"))
            return crosshair();
        if (const std::optional<AnnotationKind> kind = kindFromId(id); kind && measurementTool(*kind).placement() != Placement::None)
            return measuring(*kind);
        return std::nullopt;
    }

    bool operator==(const ViewportTool &o) const { return m_mode == o.m_mode && m_measurement == o.m_measurement; }
    bool operator!=(const ViewportTool &o) const { return !(*this == o); }

private:
    enum class Mode { Pan, Crosshair, Measure };
    ViewportTool(Mode mode, const MeasurementTool *measurement) : m_mode(mode), m_measurement(measurement) {}
    Mode m_mode = Mode::Pan;
    const MeasurementTool *m_measurement = nullptr;
};

} // namespace spectrum
