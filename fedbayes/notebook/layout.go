package notebook

// HalfWidth is the width in CSS pixels of a chart drawn beside another in Row: two of them and
// Row's gap fit in the output area of Jupyter Notebook 6 in a 1280-pixel-wide window. That area is
// OutputWidth wide there; two charts of 480 pixels (972 with the gap) already wrap, one under the
// other, in the real page (headless Chromium, 2026-12-02).
const HalfWidth = 470

// OutputWidth is the width in CSS pixels of a cell's output area in Jupyter Notebook 6 in a
// 1280-pixel-wide window (978 pixels less the output's padding of 0.4em on each side), measured in
// the real page (headless Chromium, 2026-12-02).
const OutputWidth = 966
