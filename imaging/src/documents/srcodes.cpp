// SPDX-License-Identifier: Apache-2.0
#include "documents/srcodes.h"

#include <QString>

namespace spectrum::srcodes {

namespace {

struct Known
{
    Quantity quantity;
    const char *sct;
    const char *srt;  ///< the retired SNOMED RT code of the same concept, as older reports write it
    const char *meaning;
};

const Known kKnown[] = {
    {Quantity::Length, "410668003", "G-D7FE", "Length"},
    {Quantity::LongAxis, "103339001", "G-A185", "Long Axis"},
    {Quantity::ShortAxis, "103340004", "G-A186", "Short Axis"},
    {Quantity::CobbAngle, "285285000", "", "Cobb angle"},
    {Quantity::Area, "42798000", "G-A166", "Area"},
    {Quantity::Mean, "373098007", "R-00317", "Mean"},
    {Quantity::StandardDeviation, "386136009", "R-10047", "Standard Deviation"},
    {Quantity::Minimum, "255605001", "R-404FB", "Minimum"},
    {Quantity::Maximum, "56851009", "G-A437", "Maximum"},
};

const Known *known(Quantity q)
{
    for (const Known &k : kKnown)
        if (k.quantity == q)
            return &k;
    return nullptr;
}

QString text(const OFString &s)
{
    return QString::fromUtf8(s.c_str());
}

} // namespace

bool same(const DSRCodedEntryValue &a, const DSRBasicCodedEntry &b)
{
    return a.getCodeValue() == b.CodeValue && a.getCodingSchemeDesignator() == b.CodingSchemeDesignator;
}

bool same(const DSRCodedEntryValue &a, const DSRCodedEntryValue &b)
{
    return a.getCodeValue() == b.getCodeValue() && a.getCodingSchemeDesignator() == b.getCodingSchemeDesignator();
}

DSRCodedEntryValue conceptOf(Quantity q)
{
    switch (q) {
    case Quantity::Angle:
        return DSRCodedEntryValue(CODE_DCM_Angle);
    case Quantity::Length:
    case Quantity::LongAxis:
    case Quantity::ShortAxis:
    case Quantity::CobbAngle:
    case Quantity::Area: {
        const Known *k = known(q);
        return sct(k->sct, k->meaning);
    }
    default:
        return DSRCodedEntryValue();  // a value and the statistics: the modality's quantity (pixelQuantity)
    }
}

std::optional<DSRCodedEntryValue> derivationOf(Quantity q)
{
    if (q != Quantity::Mean && q != Quantity::StandardDeviation && q != Quantity::Minimum && q != Quantity::Maximum)
        return std::nullopt;
    const Known *k = known(q);
    return sct(k->sct, k->meaning);
}

DSRCodedEntryValue pixelQuantity(const QString &unitUcum, const QString &modality)
{
    if (unitUcum == QLatin1String("[hnsf'U]"))
        return DSRCodedEntryValue(CODE_DCM_AttenuationCoefficient);
    if (modality == QLatin1String("MR"))
        return DSRCodedEntryValue(CODE_DCM_MRSignalIntensity);
    return DSRCodedEntryValue("PIXVAL", "99SPECTRUM", "Modality pixel value");
}

std::optional<Quantity> quantityOf(const DSRCodedEntryValue &concept, const DSRCodedEntryValue *derivation)
{
    auto match = [](const DSRCodedEntryValue &c) -> std::optional<Quantity> {
        const OFString &scheme = c.getCodingSchemeDesignator();
        for (const Known &k : kKnown) {
            if ((scheme == "SCT" && c.getCodeValue() == k.sct) || ((scheme == "SRT" || scheme == "SNM3") && c.getCodeValue() == k.srt))
                return k.quantity;
        }
        if (same(c, CODE_DCM_Angle))
            return Quantity::Angle;
        // Other schemes (a vendor's, 99…): by the meaning's words.
        const QString m = text(c.getCodeMeaning()).toLower();
        if (m == QLatin1String("length") || m == QLatin1String("distance") || m == QLatin1String("diameter"))
            return Quantity::Length;
        if (m.contains(QLatin1String("long axis")))
            return Quantity::LongAxis;
        if (m.contains(QLatin1String("short axis")))
            return Quantity::ShortAxis;
        if (m.contains(QLatin1String("cobb")))
            return Quantity::CobbAngle;
        if (m == QLatin1String("angle"))
            return Quantity::Angle;
        if (m == QLatin1String("area"))
            return Quantity::Area;
        return std::nullopt;
    };
    if (derivation) {
        const std::optional<Quantity> d = match(*derivation);
        if (d == Quantity::Mean || d == Quantity::StandardDeviation || d == Quantity::Minimum || d == Quantity::Maximum)
            return d;
        const QString m = text(derivation->getCodeMeaning()).toLower();
        if (m == QLatin1String("mean"))
            return Quantity::Mean;
        if (m.startsWith(QLatin1String("standard deviation")))
            return Quantity::StandardDeviation;
        if (m == QLatin1String("minimum"))
            return Quantity::Minimum;
        if (m == QLatin1String("maximum"))
            return Quantity::Maximum;
        return std::nullopt;
    }
    if (std::optional<Quantity> q = match(concept))
        return q;
    // Statistics written as their own concepts (DCM "Mean Attenuation Coefficient"…).
    if (same(concept, CODE_DCM_MeanAttenuationCoefficient))
        return Quantity::Mean;
    if (same(concept, CODE_DCM_MinimumAttenuationCoefficient))
        return Quantity::Minimum;
    if (same(concept, CODE_DCM_MaximumAttenuationCoefficient))
        return Quantity::Maximum;
    if (same(concept, CODE_DCM_StandardDeviation))
        return Quantity::StandardDeviation;
    return std::nullopt;
}

} // namespace spectrum::srcodes
