// SPDX-License-Identifier: Apache-2.0
// The measurement tools, one for each line of SPECTRUM_MEASUREMENT_TOOLS (annotation.h): the one place a tool is
// known by its kind.
#include "spectrum/imaging/tools/measurementtool.h"


#define SPECTRUM_DECLARE_TOOL(kind) const spectrum::MeasurementTool &make##kind##Tool();
SPECTRUM_MEASUREMENT_TOOLS(SPECTRUM_DECLARE_TOOL)
#undef SPECTRUM_DECLARE_TOOL

namespace spectrum {

namespace {

const QList<const MeasurementTool *> &table()
{
    static const QList<const MeasurementTool *> tools = [] {
        QList<const MeasurementTool *> list;
#define SPECTRUM_REGISTER_TOOL(kind) list << &make##kind##Tool();
        SPECTRUM_MEASUREMENT_TOOLS(SPECTRUM_REGISTER_TOOL)
#undef SPECTRUM_REGISTER_TOOL
        for (int i = 0; i < list.size(); ++i)
            Q_ASSERT(int(list[i]->kind()) == i);  // each tool at its kind's place
        return list;
    }();
    return tools;
}

} // namespace

const MeasurementTool &measurementTool(AnnotationKind kind)
{
    return *table().at(int(kind));
}

QList<const MeasurementTool *> measurementTools()
{
    return table();
}

QString kindId(AnnotationKind kind)
{
    static const QStringList ids = {
#define SPECTRUM_TOOL_ID(kind) QStringLiteral(#kind),
        SPECTRUM_MEASUREMENT_TOOLS(SPECTRUM_TOOL_ID)
#undef SPECTRUM_TOOL_ID
    };
    return ids.value(int(kind));
}

std::optional<AnnotationKind> kindFromId(const QString &id)
{
    for (const MeasurementTool *tool : table())
        if (kindId(tool->kind()) == id)
            return tool->kind();
    return std::nullopt;
}

} // namespace spectrum
