package engine

import (
	"fmt"
	"math"
	"sort"
	"sync"

	"fedbayes.dev/fedbayes/data"
	"fedbayes.dev/fedbayes/partition"
	"fedbayes.dev/fedbayes/predictive"
)

// problem is the data side of one run: the clients' pool of training examples and its partition, the
// server's set, and the test set.
type problem struct {
	// train holds the examples the clients share; part.Clients index into it.
	train *data.Dataset
	part  *partition.Partition
	// heldOut holds, per client, the indices into train of its held-out examples (partition.held_out;
	// nil without), which part.Clients do not hold: the client's own test data.
	heldOut [][]int
	// server is the server's set (nil without dataset.server_fraction).
	server *data.Dataset
	test   *data.Dataset
	// numClasses is C (0 for regression); exampleSize the values per example.
	numClasses, exampleSize int
	// regression says the examples have targets, standardised on the training set, instead of labels.
	regression bool
}

// datasetCache keeps loaded datasets for the runs of one Run call (a sweep loads each dataset once).
type datasetCache struct {
	mu    sync.Mutex
	items map[string][2]*data.Dataset
}

// load returns the dataset's training and test sets; split seeds the train/test split of a dataset
// that has none of its own (data.WithSeed; 0 for every spec without dataset.split_per_seed).
func (c *datasetCache) load(name, dir string, split uint64) (train, test *data.Dataset, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	key := fmt.Sprintf("%s\x00%s\x00%d", name, dir, split)
	if v, ok := c.items[key]; ok {
		return v[0], v[1], nil
	}
	train, test, err = data.Load(name, dir, data.WithSeed(split))
	if err != nil {
		return nil, nil, err
	}
	if c.items == nil {
		c.items = map[string][2]*data.Dataset{}
	}
	c.items[key] = [2]*data.Dataset{train, test}
	return train, test, nil
}

// newProblem loads and prepares the data of a run (spec with defaults) for a seed.
func newProblem(s *Spec, seed int64, cache *datasetCache) (*problem, error) {
	dir := s.Dataset.Dir
	if dir == "" {
		dir = data.Dir()
	}
	var split uint64
	if s.Dataset.SplitPerSeed && data.SplitBySeed(s.Dataset.Name) {
		split = uint64(seed) // a dataset with a test split of its own is loaded (and kept) once
	}
	train, test, err := cache.load(s.Dataset.Name, dir, split)
	if err != nil {
		return nil, specErr("dataset.name", "%q: %v", s.Dataset.Name, err)
	}
	if n := s.Dataset.Subsample; n > 0 && n < train.Len() {
		part, _, err := data.Split(train, float64(n)/float64(train.Len()), derive(seed, tagSubsample))
		if err != nil {
			return nil, specErr("dataset.subsample", "%d: %v", n, err)
		}
		train = part
	}
	if n := s.Dataset.TestSubsample; n > 0 && n < test.Len() {
		part, _, err := data.Split(test, float64(n)/float64(test.Len()), derive(seed, tagTestSubsample))
		if err != nil {
			return nil, specErr("dataset.test_subsample", "%d: %v", n, err)
		}
		test = part
	}
	if train.IsRegression() {
		if train, test, err = predictive.StandardizeTargets(train, test); err != nil {
			return nil, specErr("dataset.name", "%q: %v", s.Dataset.Name, err)
		}
	}
	p := &problem{test: test, numClasses: train.NumClasses, exampleSize: train.ExampleSize(), regression: train.IsRegression()}
	if f := s.Dataset.ServerFraction; f > 0 {
		server, rest, err := data.SplitServer(train, f, derive(seed, tagServer))
		if err != nil {
			return nil, specErr("dataset.server_fraction", "%v: %v", f, err)
		}
		p.server, train = server, rest
	}
	p.train = train
	if p.part, err = makePartition(s.Partition, train, seed); err != nil {
		return nil, err
	}
	if h := s.Partition.HeldOut; h > 0 {
		split, err := partition.HoldOut(p.part, train.Labels, h, derive(seed, tagHeldOut))
		if err != nil {
			return nil, specErr("partition.held_out", "%v (%s, %d examples): %v", h, p.part.Method, train.Len(), err)
		}
		p.part, p.heldOut = split.Train, split.Test
	}
	for k, idx := range p.part.Clients {
		if len(idx) == 0 {
			return nil, specErr("partition.clients", "client %d has no examples (%s on %d examples); use fewer clients, "+
				"more data or a larger partition.min_size", k, p.part.Method, train.Len())
		}
	}
	return p, nil
}

// clientSets returns the training sets of clients ids (copies of their examples), in that order.
func (p *problem) clientSets(ids []int) ([]*data.Dataset, error) {
	sets := make([]*data.Dataset, len(ids))
	for j, id := range ids {
		d, err := p.train.Select(p.part.Clients[id])
		if err != nil {
			return nil, fmt.Errorf("client %d: %w", id, err)
		}
		sets[j] = d
	}
	return sets, nil
}

// makePartition splits the clients' pool as the spec says.
func makePartition(ps PartitionSpec, train *data.Dataset, seed int64) (*partition.Partition, error) {
	s := derive(seed, tagPartition)
	var (
		p   *partition.Partition
		err error
	)
	labels, c, k := train.Labels, train.NumClasses, ps.Clients
	if train.IsRegression() {
		return sortedPartition(ps, train, s)
	}
	switch ps.Method {
	case "iid":
		p, err = partition.IID(labels, c, k, s)
	case "dirichlet":
		p, err = partition.Dirichlet(labels, c, k, partition.DirichletOptions{Alpha: ps.Alpha, MinSize: ps.MinSize, Seed: s})
	case "shards":
		p, err = partition.Shards(labels, c, k, ps.ShardsPerClient, s)
	case "classes":
		p, err = partition.ClassesPerClient(labels, c, k, ps.ClassesPerClient, s)
	case "heterogeneity":
		p, err = partition.Heterogeneity(labels, c, k, ps.H, s)
	default:
		err = fmt.Errorf("unknown method %q", ps.Method)
	}
	if err == nil && ps.Sizes != nil {
		p, err = resizePartition(p, *ps.Sizes, labels, s)
	}
	if err != nil {
		return nil, specErr("partition", "%s, %d clients, %d examples: %v", ps.Method, k, train.Len(), err)
	}
	return p, nil
}

// resizePartition gives the clients of the label partition p the sizes of z (partition.ClientSizes
// and partition.WithSizes, from the partition's seed s on their own streams).
func resizePartition(p *partition.Partition, z SizesSpec, labels []int32, s uint64) (*partition.Partition, error) {
	opt := partition.SizeOptions{Kind: partition.SizeKind(z.Kind), Exponent: z.Exponent, Sigma: z.Sigma, Beta: z.Beta, Seed: s}
	sizes, err := partition.ClientSizes(p.Total(), p.NumClients(), opt)
	if err != nil {
		return nil, err
	}
	q, err := partition.WithSizes(p, labels, sizes, s)
	if err != nil {
		return nil, err
	}
	q.Method = fmt.Sprintf("%s, sizes %s", p.Method, opt)
	return q, nil
}

// Stream tags of the evaluation's draws (seeds.go lists the others).
const (
	tagHeldOut         = "held-out"
	tagFairnessClients = "fairness-clients"
)

// fairnessClients returns the clients the fairness evaluation scores, increasing: all of them when
// there are at most n, else n drawn uniformly without replacement from the seed, the same in every
// round and in a resumed run.
func (p *problem) fairnessClients(n int, seed int64) []int {
	k := len(p.part.Clients)
	ids := make([]int, k)
	for i := range ids {
		ids[i] = i
	}
	if k <= n {
		return ids
	}
	ids = permutation(derive(seed, tagFairnessClients), k)[:n]
	sort.Ints(ids)
	return ids
}

// fairnessSets returns, for each of the clients ids, the examples (flat inputs and labels) on which
// the global model's per-client metrics are measured (Jamoussi et al. (BA-BFL), "Metrics"): "local"
// draws at most max of the client's own training examples; "held-out" at most max of its held-out
// examples (partition.held_out), which it never trains on; "test-share" draws at most max test
// examples with the client's class proportions (largest remainders). A client's draw depends on the
// seed and its id only, so it is the same in every round, in a resumed run, and whichever other
// clients are scored.
func (p *problem) fairnessSets(mode string, max int, ids []int, seed int64) (xs [][]float32, ys [][]int32) {
	if mode == "off" {
		return nil, nil
	}
	ex := p.exampleSize
	gather := func(d *data.Dataset, idx []int) ([]float32, []int32) {
		x := make([]float32, 0, len(idx)*ex)
		y := make([]int32, 0, len(idx))
		for _, i := range idx {
			x = append(x, d.X[i*ex:(i+1)*ex]...)
			y = append(y, d.Labels[i])
		}
		return x, y
	}
	// upTo draws at most max of a client's indices, keeping their order.
	upTo := func(k int, idx []int) []int {
		if len(idx) <= max {
			return idx
		}
		perm := permutation(derive(seed, tagFairness, k), len(idx))[:max]
		sort.Ints(perm)
		pick := make([]int, max)
		for i, j := range perm {
			pick[i] = idx[j]
		}
		return pick
	}
	xs, ys = make([][]float32, len(ids)), make([][]int32, len(ids))
	switch mode {
	case "local":
		for j, k := range ids {
			xs[j], ys[j] = gather(p.train, upTo(k, p.part.Clients[k]))
		}
	case "held-out":
		for j, k := range ids {
			xs[j], ys[j] = gather(p.train, upTo(k, p.heldOut[k]))
		}
	case "test-share":
		byClass := make([][]int, p.numClasses)
		for i, l := range p.test.Labels {
			byClass[l] = append(byClass[l], i)
		}
		for j, k := range ids {
			quota := shareQuota(p.part.Counts[k], max)
			var pick []int
			for c, q := range quota {
				pool := byClass[c]
				q = min(q, len(pool))
				perm := permutation(derive(seed, tagFairness, k, c), len(pool))[:q]
				for _, j := range perm {
					pick = append(pick, pool[j])
				}
			}
			sort.Ints(pick)
			xs[j], ys[j] = gather(p.test, pick)
		}
	}
	return xs, ys
}

// shareQuota splits total over classes in proportion to counts, by largest remainders.
func shareQuota(counts []int, total int) []int {
	n := 0
	for _, c := range counts {
		n += c
	}
	total = min(total, n)
	quota := make([]int, len(counts))
	if n == 0 {
		return quota
	}
	type rem struct {
		c int
		r float64
	}
	rems := make([]rem, len(counts))
	left := total
	for c, cnt := range counts {
		exact := float64(total) * float64(cnt) / float64(n)
		quota[c] = int(math.Floor(exact))
		left -= quota[c]
		rems[c] = rem{c, exact - float64(quota[c])}
	}
	sort.SliceStable(rems, func(i, j int) bool { return rems[i].r > rems[j].r })
	for i := 0; i < left; i++ {
		quota[rems[i].c]++
	}
	return quota
}
