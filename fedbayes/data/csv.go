package data

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// CSVOptions says how LoadCSV reads a table.
type CSVOptions struct {
	// Name of the resulting dataset; the file name when empty.
	Name string
	// Target is the header name of the target column (required).
	Target string
	// Features are the header names of the feature columns, in order; nil uses every other column.
	Features []string
	// Comma is the field separator; 0 detects ',' or ';' (UCI files use both) from the header.
	Comma rune
	// Classification reads the target as class names instead of a number: the classes are its
	// distinct values, in numeric order when all are numbers, else in lexicographic order.
	Classification bool
}

// LoadCSV reads a table with a header row, raw or gzip-compressed, as a regression dataset (or a
// classification dataset with opts.Classification). Every feature cell must be a number: an empty,
// "NA" or malformed cell is an error naming the file, line and column. Values are not normalised;
// Load standardises the features with the training split's statistics. A file whose content is
// longer than MaxDataMemory / TableMemoryFactor bytes is refused, with no more than that read or
// decompressed.
func LoadCSV(path string, opts CSVOptions) (*Dataset, error) {
	all, err := readTable(path)
	if err != nil {
		return nil, err
	}
	if opts.Target == "" {
		return nil, fileErrorf(path, "CSVOptions.Target (the target column's name) is required")
	}
	comma := opts.Comma
	if comma == 0 {
		header, _, _ := bytes.Cut(all, []byte("\n"))
		comma = ','
		if bytes.Count(header, []byte(";")) > bytes.Count(header, []byte(",")) {
			comma = ';'
		}
	}
	r := csv.NewReader(bytes.NewReader(all))
	r.Comma = comma
	r.ReuseRecord = true
	header, err := r.Read()
	if err != nil {
		return nil, fileErrorf(path, "reading the header: %v", err)
	}
	header = slices.Clone(header)
	col := map[string]int{}
	for i, h := range header {
		h = strings.TrimSpace(h)
		header[i] = h
		if _, dup := col[h]; dup {
			return nil, fileErrorf(path, "column name %q appears twice in the header", h)
		}
		col[h] = i
	}
	target, ok := col[opts.Target]
	if !ok {
		return nil, fileErrorf(path, "no column %q in the header (columns: %s)", opts.Target, strings.Join(header, ", "))
	}
	features := opts.Features
	if features == nil {
		for _, h := range header {
			if h != opts.Target {
				features = append(features, h)
			}
		}
	}
	if len(features) == 0 {
		return nil, fileErrorf(path, "no feature columns besides the target %q", opts.Target)
	}
	featCols := make([]int, len(features))
	for i, f := range features {
		c, ok := col[f]
		if !ok {
			return nil, fileErrorf(path, "no feature column %q in the header (columns: %s)", f, strings.Join(header, ", "))
		}
		if c == target {
			return nil, fileErrorf(path, "column %q is both the target and a feature", f)
		}
		featCols[i] = c
	}
	name := opts.Name
	if name == "" {
		name = path
	}
	// The rows are counted before anything is allocated for them: the file states no count, and a
	// slice grown row by row takes up to twice its final size. The lines after the header bound
	// the records from above (a quoted cell may span lines); so does the text, as every feature
	// takes at least two bytes (a digit and a separator or line end), which bounds the capacity
	// of a file of few records and many quoted line ends.
	rest := all[r.InputOffset():]
	lines := bytes.Count(rest, []byte("\n"))
	if len(rest) > 0 && rest[len(rest)-1] != '\n' {
		lines++
	}
	rows := min(lines, (len(rest)+1)/(2*len(features)))
	ds := &Dataset{Name: name, Shape: []int{len(features)}, FeatureNames: slices.Clone(features),
		X: make([]float32, 0, rows*len(features))}
	// Classification keeps each row's class as the index of its name among the names seen so far
	// (each name stored once, not one string a row); the indices are put in the classes' order at
	// the end.
	var (
		seen      []string
		seenIndex map[string]int32
		labels    []int32
	)
	if opts.Classification {
		seenIndex = map[string]int32{}
		labels = make([]int32, 0, rows)
	} else {
		ds.Targets = make([]float32, 0, rows)
	}
	for {
		rec, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			var pe *csv.ParseError
			if errors.As(err, &pe) {
				return nil, fileErrorf(path, "line %d: %v", pe.Line, pe.Err)
			}
			return nil, fileErrorf(path, "%v", err)
		}
		line, _ := r.FieldPos(0)
		for i, c := range featCols {
			v, err := parseCell(rec[c])
			if err != nil {
				return nil, fileErrorf(path, "line %d, column %q: %v", line, features[i], err)
			}
			ds.X = append(ds.X, v)
		}
		if opts.Classification {
			class := strings.TrimSpace(rec[target])
			k, ok := seenIndex[class]
			if !ok {
				if len(seen) == MaxTableClasses {
					return nil, fileErrorf(path, "line %d, target column %q: more than %d classes (data.MaxTableClasses); is it a class column?", line, opts.Target, MaxTableClasses)
				}
				class = strings.Clone(class) // not the record's line, which the next read replaces
				k = int32(len(seen))
				seenIndex[class] = k
				seen = append(seen, class)
			}
			labels = append(labels, k)
			continue
		}
		v, err := parseCell(rec[target])
		if err != nil {
			return nil, fileErrorf(path, "line %d, target column %q: %v", line, opts.Target, err)
		}
		ds.Targets = append(ds.Targets, v)
	}
	if len(ds.X) == 0 {
		return nil, fileErrorf(path, "no data rows after the header")
	}
	if opts.Classification {
		ds.ClassNames = classesOf(seen)
		ds.NumClasses = len(ds.ClassNames)
		order := make(map[string]int32, len(ds.ClassNames))
		for i, c := range ds.ClassNames {
			order[c] = int32(i)
		}
		final := make([]int32, len(seen))
		for k, c := range seen {
			final[k] = order[c]
		}
		for i, k := range labels {
			labels[i] = final[k]
		}
		ds.Labels = labels
	}
	if err := ds.Validate(); err != nil {
		return nil, fileErrorf(path, "%v", err)
	}
	return ds, nil
}

// MaxTableClasses bounds the distinct classes of LoadCSV's target column: a classifier's output
// layer holds a weight per class and hidden unit, and the datasets here have at most 100 classes.
const MaxTableClasses = 1 << 16

// parseCell parses a numeric cell; missing values are errors, not zeros.
func parseCell(s string) (float32, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, errors.New("empty cell (missing values are not supported: drop or impute them first)")
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, fmt.Errorf("cannot read %q as a number", s)
	}
	if v != v || v > 3.4e38 || v < -3.4e38 {
		return 0, fmt.Errorf("value %q is not a finite float32", s)
	}
	return float32(v), nil
}

// classesOf returns the distinct values, in numeric order when all are numbers.
func classesOf(values []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, v := range values {
		if !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	numeric := true
	num := map[string]float64{}
	for _, v := range out {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil {
			numeric = false
			break
		}
		num[v] = f
	}
	if numeric {
		sort.Slice(out, func(i, j int) bool { return num[out[i]] < num[out[j]] })
	} else {
		sort.Strings(out)
	}
	return out
}
