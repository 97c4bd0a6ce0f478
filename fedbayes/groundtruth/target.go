package groundtruth

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"
)

// stack concatenates the clients' data into one data set.
func stack(clients []Data) (Data, error) {
	n, d := 0, -1
	for k, c := range clients {
		if c.N() == 0 {
			continue
		}
		_, cd := c.X.Dims()
		if d >= 0 && cd != d {
			return Data{}, fmt.Errorf("groundtruth: client %d has %d features, others %d", k, cd, d)
		}
		d = cd
		n += c.N()
	}
	if n == 0 {
		return Data{}, fmt.Errorf("groundtruth: no examples")
	}
	out := Data{X: mat.NewDense(n, d, nil), Y: make([]float64, 0, n)}
	row := 0
	for _, c := range clients {
		for i := 0; i < c.N(); i++ {
			out.X.SetRow(row, c.X.RawRowView(i))
			row++
		}
		out.Y = append(out.Y, c.Y...)
	}
	return out, nil
}

// LogDensity returns the log posterior density of the linear model given the clients' data (up to
// a constant) and its gradient: -(w - m0)^T S0^-1 (w - m0)/2 - |y - X w|^2 / (2 s2), gradient
// -S0^-1 (w - m0) + X^T (y - X w) / s2. HMC on it checks the sampler against the exact posterior.
func (m LinearModel) LogDensity(clients []Data) (LogDensity, error) {
	return stackedLogDensity(m.Prior, clients, m.check, func(t, y float64) (float64, float64) {
		r := y - t
		return -r * r / (2 * m.NoiseVar), r / m.NoiseVar
	})
}

// stackedLogDensity stacks the clients' data, checks it with check, and returns gaussianPriorPlus
// of prior and f on it (LinearModel.LogDensity, LogisticModel.LogDensity).
func stackedLogDensity(prior *Gaussian, clients []Data, check func(Data, string) error,
	f func(t, y float64) (float64, float64)) (LogDensity, error) {
	all, err := stack(clients)
	if err != nil {
		return nil, err
	}
	if err := check(all, "data"); err != nil {
		return nil, err
	}
	prec, _, err := prior.natural()
	if err != nil {
		return nil, err
	}
	return gaussianPriorPlus(prec, prior.Mean, all, f), nil
}

// gaussianPriorPlus returns the log density log N(w; m0, prec^-1) + sum_i f(x_i^T w, y_i) and its
// gradient, where f returns the log likelihood of one example and its derivative in t = x^T w.
func gaussianPriorPlus(prec *mat.SymDense, m0 *mat.VecDense, data Data, f func(t, y float64) (float64, float64)) LogDensity {
	d := m0.Len()
	n := data.N()
	t := mat.NewVecDense(n, nil)
	r := mat.NewVecDense(n, nil)
	diff := mat.NewVecDense(d, nil)
	pg := mat.NewVecDense(d, nil)
	xg := mat.NewVecDense(d, nil)
	return func(w, grad []float64) float64 {
		wv := mat.NewVecDense(d, w)
		diff.SubVec(wv, m0)
		pg.MulVec(prec, diff)
		lp := -0.5 * mat.Dot(diff, pg)
		t.MulVec(data.X, wv)
		for i := 0; i < n; i++ {
			l, dl := f(t.AtVec(i), data.Y[i])
			lp += l
			r.SetVec(i, dl)
		}
		xg.MulVec(data.X.T(), r)
		for i := range grad {
			grad[i] = xg.AtVec(i) - pg.AtVec(i)
		}
		if math.IsNaN(lp) {
			return math.Inf(-1)
		}
		return lp
	}
}
