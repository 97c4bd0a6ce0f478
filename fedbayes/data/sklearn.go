package data

import (
	"bytes"
	"errors"
	"fmt"
	"iter"
	"math"
	"path/filepath"
	"strconv"
	"strings"
)

// sklearnTable describes one of scikit-learn's bundled data files (sklearn/datasets/data/).
type sklearnTable struct {
	files        []string // data file, then the target file for diabetes
	regression   bool
	featureNames []string // when the file has none
}

// sklearnTables are the tables Install copies from Debian's python3-sklearn, by dataset name.
var sklearnTables = map[string]sklearnTable{
	"digits":        {files: []string{"digits.csv.gz"}},
	"iris":          {files: []string{"iris.csv"}, featureNames: []string{"sepal length (cm)", "sepal width (cm)", "petal length (cm)", "petal width (cm)"}},
	"wine":          {files: []string{"wine_data.csv"}},
	"breast-cancer": {files: []string{"breast_cancer.csv"}},
	"boston":        {files: []string{"boston_house_prices.csv"}, regression: true},
	"diabetes": {files: []string{"diabetes_data_raw.csv.gz", "diabetes_target.csv.gz"}, regression: true,
		featureNames: []string{"age", "sex", "bmi", "bp", "s1", "s2", "s3", "s4", "s5", "s6"}},
}

// SklearnDir is the folder under the data directory that holds the scikit-learn tables.
const SklearnDir = "sklearn"

// LoadSklearn loads one of scikit-learn's bundled datasets, whole (they have no test split), from
// dir/sklearn or dir: "digits" (1,797 8x8 images, 10 classes, shape [8, 8, 1], pixels 0..16 scaled
// to [0, 1]), "iris" (150 x 4, 3 classes), "wine" (178 x 13, 3 classes), "breast-cancer" (569 x 30,
// 2 classes), "boston" (506 x 13, regression on MEDV) or "diabetes" (442 x 10 raw features,
// regression). Table features are returned unnormalised; Load splits and standardises them. A file
// whose content is longer than MaxDataMemory / TableMemoryFactor bytes is refused, with no more than
// that read or decompressed.
func LoadSklearn(name, dir string) (*Dataset, error) {
	t, ok := sklearnTables[name]
	if !ok {
		return nil, fmt.Errorf("unknown scikit-learn dataset %q (known: %s)", name, strings.Join(SklearnNames(), ", "))
	}
	folders := dataFolders(dir, SklearnDir)
	var paths []string
	for _, f := range t.files {
		p, err := findFile(folders, f)
		if err != nil {
			return nil, fmt.Errorf("%s: %w (run `fedbayes data install`)", name, err)
		}
		paths = append(paths, p)
	}
	switch name {
	case "digits":
		return loadSklearnDigits(paths[0])
	case "boston":
		return loadSklearnBoston(paths[0])
	case "diabetes":
		return loadSklearnDiabetes(paths[0], paths[1], t.featureNames)
	default:
		return loadSklearnClassification(name, paths[0], t.featureNames)
	}
}

// SklearnNames lists the scikit-learn datasets LoadSklearn knows, in a fixed order.
func SklearnNames() []string {
	return []string{"digits", "iris", "wine", "breast-cancer", "boston", "diabetes"}
}

// numTable is a table of numbers read by readRows: Len rows of Width values, row-major in Vals.
type numTable struct {
	Vals  []float64
	Width int
}

// Len returns the number of rows.
func (t numTable) Len() int { return len(t.Vals) / t.Width }

// Row returns row i.
func (t numTable) Row(i int) []float64 { return t.Vals[i*t.Width : (i+1)*t.Width] }

// readRows reads a whole text table of numbers (raw or gzip) split by sep ("" splits on blanks),
// skipping the first skip lines; every row must have want fields. A file with more than maxRows
// data lines (0: no such bound) is refused before any is parsed: the lines are counted first. The
// values are stored in one slice, parsed in place (no copy of a line or its fields), so the reader
// allocates little more than the content itself, its text and 8 bytes a value (TableMemoryFactor).
func readRows(path string, skip int, sep string, want, maxRows int) (numTable, error) {
	raw, err := readRowsContent(path, skip, want, maxRows)
	if err != nil {
		return numTable{}, err
	}
	raw = bytes.TrimRight(raw, "\r\n")
	lines := 0
	if len(raw) > 0 {
		lines = bytes.Count(raw, []byte("\n")) + 1
	}
	if lines < skip {
		return numTable{}, fileErrorf(path, "has %d lines, fewer than the %d header lines", lines, skip)
	}
	if maxRows > 0 && lines-skip > maxRows {
		return numTable{}, fileErrorf(path, "has %d data lines, more than the %d it should have (not parsed)", lines-skip, maxRows)
	}
	text := string(raw)
	raw = nil
	for range skip {
		_, text, _ = strings.Cut(text, "\n")
	}
	// Every value takes at least one byte of text and a separator or line end: the capacity holds
	// the whole table without growing and is never more than 4 bytes a byte of content.
	t := numTable{Width: want, Vals: make([]float64, 0, min((lines-skip)*want, (len(text)+1)/2))}
	for i := range lines - skip {
		var line string
		line, text, _ = strings.Cut(text, "\n")
		if err := parseRow(&t, strings.TrimRight(line, "\r"), sep); err != nil {
			return numTable{}, fileErrorf(path, "line %d%v", skip+i+1, err)
		}
	}
	return t, nil
}

// Bounds on the text of a table whose row count is known (readRowsContent): a number with its
// separator takes at most maxNumberBytes (a float64's longest form, "-2.2250738585072014e-308", is 24
// bytes), a header line at most maxHeaderLineBytes.
const (
	maxNumberBytes     = 64
	maxHeaderLineBytes = 64 << 10
)

// readRowsContent reads the content of a table of numbers: bounded by tableBound, and where its
// rows are known (maxRows > 0) by what skip header lines and maxRows rows of want numbers can take,
// so that a small gzip stream of far more lines is refused having decompressed no more than that.
func readRowsContent(path string, skip, want, maxRows int) ([]byte, error) {
	bound, _ := tableBound()
	limit := int64(skip)*maxHeaderLineBytes + int64(maxRows)*int64(want)*maxNumberBytes
	if maxRows <= 0 || limit >= bound {
		return readTable(path)
	}
	raw, err := readAllMaybeGzipMax(path, limit)
	if le := (*longerError)(nil); errors.As(err, &le) {
		return nil, fileErrorf(path, "content is more than %s, the most that %d rows of %d numbers take (%d bytes a number); "+
			"the file has more rows or longer lines than it should (not read further)", byteSize(limit), maxRows, want, maxNumberBytes)
	}
	return raw, err
}

// parseRow appends the t.Width numbers of line, split by sep ("" splits on blanks), to t; its
// error reads after "line N". The fields are counted before any is parsed.
func parseRow(t *numTable, line, sep string) error {
	n := 0
	for range fields(line, sep) {
		n++
	}
	if n != t.Width {
		return fmt.Errorf(" has %d fields, want %d", n, t.Width)
	}
	start := len(t.Vals)
	for j, f := range fields(line, sep) {
		v, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
		if err != nil && !math.IsInf(v, 0) {
			t.Vals = t.Vals[:start]
			return fmt.Errorf(", field %d: cannot read %q as a number", j+1, f)
		}
		if math.IsNaN(v) || math.IsInf(v, 0) || math.Abs(v) > math.MaxFloat32 {
			t.Vals = t.Vals[:start]
			return fmt.Errorf(", field %d: %q is not a finite number (NaN and infinities are refused)", j+1, f)
		}
		t.Vals = append(t.Vals, v)
	}
	return nil
}

// fields yields the fields of line split by sep, as strings.Split does, or by runs of blanks
// (spaces and tabs, as strings.Fields on a table's line) where sep is "", with their index; it
// allocates nothing.
func fields(line, sep string) iter.Seq2[int, string] {
	return func(yield func(int, string) bool) {
		for j := 0; ; j++ {
			var f string
			if sep == "" {
				line = strings.TrimLeft(line, " \t")
				if line == "" {
					return
				}
				end := strings.IndexAny(line, " \t")
				if end < 0 {
					end = len(line)
				}
				f, line = line[:end], line[end:]
				if !yield(j, f) {
					return
				}
				continue
			}
			var more bool
			f, line, more = strings.Cut(line, sep)
			if !yield(j, f) || !more {
				return
			}
		}
	}
}

// sklearnHeader parses the first line "N,F,name,..." of scikit-learn's CSVs.
func sklearnHeader(path string) (n, f int, names []string, err error) {
	head, readErr, err := readPrefixMaybeGzip(path, maxHeaderLineBytes)
	if err != nil {
		return 0, 0, nil, err
	}
	first, _, found := strings.Cut(string(head), "\n")
	if !found && readErr != nil {
		return 0, 0, nil, fileErrorf(path, "reading the header: %v", readErr)
	}
	parts := strings.Split(strings.TrimRight(first, "\r"), ",")
	if len(parts) < 2 {
		return 0, 0, nil, fileErrorf(path, "first line %q is not scikit-learn's \"rows,features,...\" header", first)
	}
	n, err1 := strconv.Atoi(parts[0])
	f, err2 := strconv.Atoi(parts[1])
	if err1 != nil || err2 != nil || n <= 0 || f <= 0 {
		return 0, 0, nil, fileErrorf(path, "first line %q is not scikit-learn's \"rows,features,...\" header", first)
	}
	for _, p := range parts[2:] {
		if p = strings.TrimSpace(p); p != "" {
			names = append(names, p)
		}
	}
	return n, f, names, nil
}

// tableFromRows fills X from the first f columns of rows.
func tableFromRows(name string, rows numTable, f int) *Dataset {
	ds := &Dataset{Name: name, Shape: []int{f}, X: make([]float32, 0, rows.Len()*f)}
	for i := range rows.Len() {
		for _, v := range rows.Row(i)[:f] {
			ds.X = append(ds.X, float32(v))
		}
	}
	return ds
}

// labelsFromColumn reads integer class labels in [0, numClasses) from column c.
func labelsFromColumn(path string, rows numTable, c, numClasses, skip int) ([]int32, error) {
	labels := make([]int32, rows.Len())
	for i := range labels {
		v := rows.Row(i)[c]
		if v != float64(int32(v)) || v < 0 || int(v) >= numClasses {
			return nil, fileErrorf(path, "line %d: label %g is not a class in [0, %d)", skip+i+1, v, numClasses)
		}
		labels[i] = int32(v)
	}
	return labels, nil
}

func checkRowCount(path string, got, want int) error {
	if got != want {
		return fileErrorf(path, "has %d data rows, the header says %d", got, want)
	}
	return nil
}

func loadSklearnClassification(name, path string, featureNames []string) (*Dataset, error) {
	n, f, classes, err := sklearnHeader(path)
	if err != nil {
		return nil, err
	}
	if len(classes) < 2 {
		return nil, fileErrorf(path, "header names %d classes, want at least 2", len(classes))
	}
	rows, err := readRows(path, 1, ",", f+1, n)
	if err != nil {
		return nil, err
	}
	if err := checkRowCount(path, rows.Len(), n); err != nil {
		return nil, err
	}
	ds := tableFromRows(name, rows, f)
	ds.NumClasses, ds.ClassNames = len(classes), classes
	if len(featureNames) == f {
		ds.FeatureNames = featureNames
	}
	if ds.Labels, err = labelsFromColumn(path, rows, f, len(classes), 1); err != nil {
		return nil, err
	}
	return validated(ds)
}

func loadSklearnDigits(path string) (*Dataset, error) {
	const side, classes = 8, 10
	const examples = 1797
	rows, err := readRows(path, 0, ",", side*side+1, examples)
	if err != nil {
		return nil, err
	}
	if err := checkRowCount(path, rows.Len(), examples); err != nil {
		return nil, err
	}
	ds := &Dataset{Name: "digits", Shape: []int{side, side, 1}, NumClasses: classes, ClassNames: digitNames,
		X: make([]float32, 0, rows.Len()*side*side)}
	for i := range rows.Len() {
		for _, v := range rows.Row(i)[:side*side] {
			if v < 0 || v > 16 {
				return nil, fileErrorf(path, "line %d: pixel %g outside 0..16", i+1, v)
			}
			ds.X = append(ds.X, float32(v/16))
		}
	}
	if ds.Labels, err = labelsFromColumn(path, rows, side*side, classes, 0); err != nil {
		return nil, err
	}
	return validated(ds)
}

func loadSklearnBoston(path string) (*Dataset, error) {
	n, f, _, err := sklearnHeader(path)
	if err != nil {
		return nil, err
	}
	raw, err := readTable(path)
	if err != nil {
		return nil, err
	}
	lines := strings.SplitN(string(raw), "\n", 3)
	if len(lines) < 3 {
		return nil, fileErrorf(path, "missing the column-name line")
	}
	names := strings.Split(strings.TrimSpace(lines[1]), ",")
	for i := range names {
		names[i] = strings.Trim(strings.TrimSpace(names[i]), `"`)
	}
	if len(names) != f+1 {
		return nil, fileErrorf(path, "column-name line has %d names, want %d features + the target", len(names), f)
	}
	rows, err := readRows(path, 2, ",", f+1, n)
	if err != nil {
		return nil, err
	}
	if err := checkRowCount(path, rows.Len(), n); err != nil {
		return nil, err
	}
	ds := tableFromRows("boston", rows, f)
	ds.FeatureNames = names[:f]
	ds.Targets = make([]float32, rows.Len())
	for i := range ds.Targets {
		ds.Targets[i] = float32(rows.Row(i)[f])
	}
	return validated(ds)
}

func loadSklearnDiabetes(dataPath, targetPath string, names []string) (*Dataset, error) {
	const f, examples = 10, 442
	rows, err := readRows(dataPath, 0, "", f, examples)
	if err != nil {
		return nil, err
	}
	targets, err := readRows(targetPath, 0, "", 1, examples)
	if err != nil {
		return nil, err
	}
	if rows.Len() != targets.Len() {
		return nil, fileErrorf(targetPath, "has %d targets but %s has %d rows", targets.Len(), filepath.Base(dataPath), rows.Len())
	}
	if err := checkRowCount(dataPath, rows.Len(), examples); err != nil {
		return nil, err
	}
	ds := tableFromRows("diabetes", rows, f)
	ds.FeatureNames = names
	ds.Targets = make([]float32, rows.Len())
	for i := range ds.Targets {
		ds.Targets[i] = float32(targets.Vals[i])
	}
	return validated(ds)
}

// validated returns ds if it is consistent, else nil and the error.
func validated(ds *Dataset) (*Dataset, error) {
	if err := ds.Validate(); err != nil {
		return nil, err
	}
	return ds, nil
}
