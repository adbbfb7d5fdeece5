// SPDX-License-Identifier: Apache-2.0
// Where images lie in the patient (planegeometry.h): pixels to patient points and back on any orientation, and
// the reference line of one slice on another image — checked against positions worked out by hand.
#include "spectrum/imaging/volumes/planegeometry.h"

#include <QTest>

#include <cmath>

using namespace spectrum;

namespace {

ImageInfo plane(std::array<double, 3> position, std::array<double, 6> orientation, int rows, int columns, double spacing,
                const QString &frame = QStringLiteral("1.2.3"))
{
    ImageInfo i;
    i.rows = rows;
    i.columns = columns;
    i.rowSpacing = i.columnSpacing = spacing;
    i.hasPosition = true;
    i.imagePosition = position;
    i.imageOrientation = orientation;
    i.frameOfReferenceUid = frame;
    i.sliceThickness = spacing;
    return i;
}

} // namespace

class tst_PlaneGeometry : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void pixelsAndPatientPointsBothWays()
    {
        // An oblique plane: rotated 30° about z, tilted.
        const double c = std::cos(M_PI / 6), s = std::sin(M_PI / 6);
        const ImageInfo oblique = plane({-100, 20, 35}, {c, s, 0, -s * 0.8, c * 0.8, -0.6}, 256, 320, 0.7);
        const std::optional<PatientPoint> corner = patientPointAt(oblique, QPointF(0.5, 0.5));
        QVERIFY(corner);
        QCOMPARE((*corner)[0], -100.0);  // the first pixel's centre is Image Position
        QCOMPARE((*corner)[2], 35.0);
        for (const QPointF at : {QPointF(10.25, 200.5), QPointF(319, 0), QPointF(160, 128)}) {
            double distance = 1;
            const std::optional<QPointF> back = imagePointOf(oblique, *patientPointAt(oblique, at), &distance);
            QVERIFY(back);
            QVERIFY(std::abs(back->x() - at.x()) < 1e-9 && std::abs(back->y() - at.y()) < 1e-9);
            QVERIFY(std::abs(distance) < 1e-9);
        }
        // Off the plane along its normal: the same pixel, that far away.
        const PatientPoint on = *patientPointAt(oblique, QPointF(50, 60));
        const std::array<double, 3> n{s * -0.6, -(c * -0.6), c * 0.8 * c + s * s * 0.8};
        double distance = 0;
        const QPointF again = *imagePointOf(oblique, {on[0] + 5 * n[0], on[1] + 5 * n[1], on[2] + 5 * n[2]}, &distance);
        QVERIFY(std::abs(distance - 5) < 1e-6);
        QVERIFY(std::abs(again.x() - 50) < 1e-6 && std::abs(again.y() - 60) < 1e-6);
        ImageInfo none = oblique;
        none.hasPosition = false;
        QVERIFY(!patientPointAt(none, QPointF(1, 1)));
    }

    void anAxialSliceOnACoronalImage()
    {
        // A coronal image 250 mm wide and high, through y = 0, its top row at z = +125 (rows run towards the feet).
        const ImageInfo coronal = plane({-124.5, 0, 124.5}, {1, 0, 0, 0, 0, -1}, 250, 250, 1.0);
        // An axial slice at z = 20.
        const ImageInfo axial = plane({-124.5, -124.5, 20}, {1, 0, 0, 0, 1, 0}, 250, 250, 1.0);
        const std::optional<QLineF> line = referenceLine(coronal, axial);
        QVERIFY(line);
        // Horizontal, across the whole width, at the row of z = 20: (124.5 − 20) / 1 + ½.
        QVERIFY(std::abs(line->y1() - 105) < 1e-9 && std::abs(line->y2() - 105) < 1e-9);
        QVERIFY(std::abs(std::abs(line->dx()) - 250) < 1e-9);
        // And the coronal's line on the axial: the row of y = 0.
        const std::optional<QLineF> back = referenceLine(axial, coronal);
        QVERIFY(back);
        QVERIFY(std::abs(back->y1() - 125) < 1e-9 && std::abs(back->y2() - 125) < 1e-9);
    }

    void noLineWhereThereIsNone()
    {
        const ImageInfo axial = plane({0, 0, 0}, {1, 0, 0, 0, 1, 0}, 100, 100, 1);
        const ImageInfo nearlyAxial = plane({0, 0, 10}, {1, 0, 0, 0, 0.9995, 0.0316}, 100, 100, 1);  // ~2°
        QVERIFY(!referenceLine(axial, nearlyAxial));  // parallel
        const ImageInfo otherFrame = plane({0, 0, 0}, {1, 0, 0, 0, 0, -1}, 100, 100, 1, QStringLiteral("9.9"));
        QVERIFY(!referenceLine(axial, otherFrame));  // another frame of reference: no common coordinates
        const ImageInfo farAway = plane({0, 500, 300}, {1, 0, 0, 0, 0, -1}, 100, 100, 1);  // a coronal above the axial's plane
        QVERIFY(!referenceLine(axial, farAway));  // its extent never reaches z = 0
    }
};

QTEST_GUILESS_MAIN(tst_PlaneGeometry)
#include "tst_planegeometry.moc"
