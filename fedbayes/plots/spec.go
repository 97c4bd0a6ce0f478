package plots

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sort"

	"fedbayes.dev/fedbayes/internal/strictjson"

	"fedbayes.dev/fedbayes/results"
)

// SpecVersion is the version of the figure-spec JSON format that this package reads and writes.
const SpecVersion = 1

// SpecFile is a figure-spec JSON file: a list of figures, each a builder kind and its data. The
// engine writes one into a results directory; `fedbayes figures` turns it into SVG and PNG files.
// The format is documented in docs/plots.md.
type SpecFile struct {
	// Version must be SpecVersion.
	Version int `json:"version"`
	// Figures are drawn in order.
	Figures []FigureSpec `json:"figures"`
}

// FigureSpec is one figure of a SpecFile.
type FigureSpec struct {
	// Name is the file stem of the figure (letters, digits, '-', '_', '.').
	Name string `json:"name"`
	// Kind selects the builder; see Kinds.
	Kind string `json:"kind"`
	// Size is "column" (default) or "wide".
	Size string `json:"size,omitempty"`
	// Data is the builder's input: the JSON form of Curves, Toy, Reliability, Spread or Partition,
	// or an ECharts option for kind "echarts".
	Data json.RawMessage `json:"data"`
}

// builders maps each kind to a function decoding its data and building the chart.
var builders = map[string]func(name string, data []byte) (*Chart, error){
	"learning_curves":      curvesKind(LearningCurves),
	"retention":            curvesKind(Retention),
	"versus_layers":        curvesKind(VersusLayers),
	"versus_heterogeneity": curvesKind(VersusHeterogeneity),
	"nll_versus_beta":      curvesKind(NLLVersusBeta),
	"toy_aggregation": func(name string, data []byte) (*Chart, error) {
		var d Toy
		if err := decodeStrict(data, &d); err != nil {
			return nil, err
		}
		return ToyAggregation(name, d)
	},
	"reliability": func(name string, data []byte) (*Chart, error) {
		var d Reliability
		if err := decodeStrict(data, &d); err != nil {
			return nil, err
		}
		return ReliabilityDiagram(name, d)
	},
	"learned_spread": func(name string, data []byte) (*Chart, error) {
		var d Spread
		if err := decodeStrict(data, &d); err != nil {
			return nil, err
		}
		return LearnedSpread(name, d)
	},
	"partition_heatmap": func(name string, data []byte) (*Chart, error) {
		var d Partition
		if err := decodeStrict(data, &d); err != nil {
			return nil, err
		}
		return PartitionHeatmap(name, d)
	},
	"echarts": func(name string, data []byte) (*Chart, error) {
		var option map[string]any
		if err := decodeStrict(data, &option); err != nil {
			return nil, err
		}
		return NewChart(name, option, 0, 0)
	},
}

func curvesKind(build func(string, Curves) (*Chart, error)) func(string, []byte) (*Chart, error) {
	return func(name string, data []byte) (*Chart, error) {
		var d Curves
		if err := decodeStrict(data, &d); err != nil {
			return nil, err
		}
		return build(name, d)
	}
}

// decodeStrict decodes JSON into v, rejecting unknown fields and trailing data, and then what
// encoding/json accepts but the spec's strict reader refuses (strictjson.Check: a duplicate key, a
// number outside float64's range). Syntax and type errors keep encoding/json's byte offsets, which
// the command turns into lines and columns.
func decodeStrict(data []byte, v any) error {
	if len(bytes.TrimSpace(data)) == 0 {
		return fmt.Errorf("missing \"data\"")
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("data: %w", err)
	}
	if dec.More() {
		return fmt.Errorf("data: trailing JSON after the value")
	}
	if err := strictjson.Check(data); err != nil {
		return fmt.Errorf("data: %w", err)
	}
	return nil
}

// Kinds lists the figure kinds a FigureSpec may name, sorted.
func Kinds() []string {
	ks := make([]string, 0, len(builders))
	for k := range builders {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// Build makes the interactive chart of the figure (screen size and style).
func (f FigureSpec) Build() (*Chart, error) {
	build, ok := builders[f.Kind]
	if !ok {
		return nil, fmt.Errorf("figure %q: unknown kind %q (known: %v)", f.Name, f.Kind, Kinds())
	}
	if _, err := FigureSizeByName(f.Size); err != nil {
		return nil, fmt.Errorf("figure %q: %w", f.Name, err)
	}
	c, err := build(f.Name, f.Data)
	if err != nil {
		return nil, fmt.Errorf("figure %q (%s): %w", f.Name, f.Kind, err)
	}
	return c, nil
}

// ParseSpec reads a figure-spec JSON document (a SpecFile) and checks its version, that it has
// figures and that their names are unique. Unknown fields are errors.
func ParseSpec(raw []byte) (*SpecFile, error) {
	var s SpecFile
	if err := decodeStrict(raw, &s); err != nil {
		return nil, fmt.Errorf("figure spec: %w", err)
	}
	if s.Version != SpecVersion {
		return nil, fmt.Errorf("figure spec: version %d, want %d", s.Version, SpecVersion)
	}
	if len(s.Figures) == 0 {
		return nil, fmt.Errorf("figure spec: no figures")
	}
	seen := map[string]int{}
	for i, f := range s.Figures {
		if !nameRE.MatchString(f.Name) {
			return nil, fmt.Errorf("figure spec: figure %d: name %q: use only letters, digits, '-', '_' and '.'", i, f.Name)
		}
		if j, dup := seen[f.Name]; dup {
			return nil, fmt.Errorf("figure spec: figures %d and %d are both named %q", j, i, f.Name)
		}
		seen[f.Name] = i
	}
	return &s, nil
}

// ReadSpecFile reads and parses a figure-spec JSON file.
func ReadSpecFile(path string) (*SpecFile, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("figure spec: %w", err)
	}
	s, err := ParseSpec(raw)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return s, nil
}

// NewFigureSpec makes a FigureSpec from a kind and its builder input (for example a Curves value),
// for the engine to write into a SpecFile. It checks that the figure builds.
func NewFigureSpec(name, kind, size string, data any) (FigureSpec, error) {
	raw, err := json.Marshal(data)
	if err != nil {
		return FigureSpec{}, fmt.Errorf("figure %q: %w", name, err)
	}
	f := FigureSpec{Name: name, Kind: kind, Size: size, Data: raw}
	if _, err := f.Build(); err != nil {
		return FigureSpec{}, err
	}
	return f, nil
}

// WriteSpecFile writes figures as an indented SpecFile JSON to path, atomically
// (results.WriteFileAtomic: a failed write leaves the old file).
func WriteSpecFile(path string, figures ...FigureSpec) error {
	raw, err := json.MarshalIndent(SpecFile{Version: SpecVersion, Figures: figures}, "", "  ")
	if err != nil {
		return fmt.Errorf("figure spec: %w", err)
	}
	if err := results.WriteFileAtomic(path, append(raw, '\n'), 0o644); err != nil {
		return fmt.Errorf("figure spec: %w", err)
	}
	return nil
}

// BuildAll builds every figure of the spec (interactive size and style), in order.
func (s *SpecFile) BuildAll() ([]*Chart, error) {
	out := make([]*Chart, len(s.Figures))
	for i, f := range s.Figures {
		c, err := f.Build()
		if err != nil {
			return nil, err
		}
		out[i] = c
	}
	return out, nil
}

// WriteFigures writes every figure of the spec as dir/NAME.svg and dir/NAME.png at its own size
// ("column" or "wide"), like the package-level WriteFigures. pngScale is device pixels per CSS
// pixel of the PNG files (0 means 3; negative writes no PNG). It returns the paths written.
func (s *SpecFile) WriteFigures(ctx context.Context, dir string, pngScale float64) ([]string, error) {
	if pngScale == 0 {
		pngScale = 3
	}
	styled := make([]*Chart, len(s.Figures))
	for i, f := range s.Figures {
		c, err := f.Build()
		if err != nil {
			return nil, err
		}
		size, _ := FigureSizeByName(f.Size) // checked by Build
		if styled[i], err = c.Styled(Style{FontFamily: "sans-serif", FontSize: size.FontSize}, size.Width, size.Height); err != nil {
			return nil, err
		}
	}
	return writeStatic(ctx, dir, pngScale, styled)
}
