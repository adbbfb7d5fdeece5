// SPDX-License-Identifier: Apache-2.0
#include "shell/manual.h"

#include <QCoreApplication>

namespace spectrum {

QString manualHtml()
{
    return QCoreApplication::translate("Manual", R"(
<h2>Spectrum — a short manual</h2>
<p>Spectrum reads studies from the archives your hospital has connected, shows them while they arrive, and sends
findings and processed images back as DICOM. <b>Values shown in HU are the modality's values; nothing is shown for a
pixel that has not arrived or has no value</b> (it is hatched).</p>

<h3>1. Find a study</h3>
<ul>
<li><b>Ctrl+F</b> goes to the search. Type any part of the patient's name from its start — family or given name,
any case, with or without accents (<i>doe</i>, <i>doe john</i>, <i>jose</i>); <b>*</b> and <b>?</b> work as wildcards.</li>
<li><b>Enter</b> searches this workstation and every configured archive; each archive's answer shows as it comes.</li>
<li><b>↓</b> moves into the results, <b>Enter</b> or a double-click opens the study. <i>Prefetch</i> fetches studies
for later.</li>
<li>Drop files, folders or a CD on the window (or File ▸ Import) to bring studies in; a report says what came in and
what was left out, and why.</li>
</ul>

<h3>2. Read</h3>
<ul>
<li>The series are on the left; click one (or drag it onto a pane) to show it. The patient's other studies are below
them: drag a prior onto a pane to compare.</li>
<li><b>Wheel</b> or <b>↑ ↓</b>: next or previous slice; the bar at the pane's right edge goes anywhere in the stack.
<b>Ctrl+wheel</b>: zoom. <b>Right-drag</b>: window and level; a right-click opens the pane's menu.</li>
<li><b>1–5</b>: CT windows (brain, lung, bone, abdomen, mediastinum); <b>6–9</b>: your own windows (Window/Level ▸
Save this window as); <b>A</b>: automatic; <b>0</b>: the file's own.</li>
<li><b>Ctrl+Alt+1/2/3/4…</b>: layouts. A double-click on a pane shows it alone; again for the layout.</li>
<li><b>S</b>: linked scrolling; the window is linked only between slices of the same kind (never onto a scout).</li>
<li><b>X</b>: the crosshair — click a point, every pane goes to it (a scout moves the axial stacks too).</li>
<li><b>M</b>: MPR — axial, coronal and sagittal through one point, slabs (MIP, MinIP, average) and oblique planes
(<b>,</b> and <b>.</b> turn them).</li>
</ul>

<h3>3. Measure and report</h3>
<ul>
<li>Tools menu: distance, angle, Cobb angle, regions (with mean, SD, min, max and area), arrows and text.</li>
<li><b>Ctrl+Z</b> / <b>Ctrl+Shift+Z</b> undo and redo what you drew, moved, edited or deleted, study by study.</li>
<li><b>K</b> marks a key image. <b>Ctrl+S</b> saves the findings to the archive as a structured report and a key object
selection; <b>Ctrl+Alt+S</b> saves the view (window, zoom, annotations) as a presentation state.</li>
</ul>

<h3>4. Filters and sending</h3>
<ul>
<li>The filter panel sharpens, smooths, finds edges… while the images still arrive. A filtered pane says
<i>FILTERED VIEW</i>; its values and measurements stay those of the original.</li>
<li><b>Ctrl+Shift+S</b> sends the series (filtered or not) back to an archive as a new, derived series.</li>
</ul>

<h3>5. When something is wrong</h3>
<p>What could not be fetched, decoded or checked is said on the pane and in the status line, with why. Help ▸ Mouse
and keys lists every key. The administrator's guide is <i>docs/INSTALL.md</i>.</p>
)");
}

} // namespace spectrum
