package deepmatch

import (
	"fmt"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// PlotCurve draws a training curve — mean hinge loss and dev MAP per epoch
// — to path; the format follows the extension (.png, .svg, .pdf).
func PlotCurve(path, title string, curve []Progress) error {
	if len(curve) == 0 {
		return fmt.Errorf("deepmatch: empty training curve")
	}
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = "epoch"
	p.Y.Label.Text = "value"
	loss, dev := make(plotter.XYs, len(curve)), make(plotter.XYs, len(curve))
	for i, c := range curve {
		loss[i] = plotter.XY{X: float64(c.Epoch), Y: c.Loss}
		dev[i] = plotter.XY{X: float64(c.Epoch), Y: c.DevMAP}
	}
	ll, err := plotter.NewLine(loss)
	if err != nil {
		return err
	}
	dl, err := plotter.NewLine(dev)
	if err != nil {
		return err
	}
	dl.Dashes = []vg.Length{vg.Points(4), vg.Points(2)}
	p.Add(ll, dl, plotter.NewGrid())
	p.Legend.Add("train hinge loss", ll)
	p.Legend.Add("dev MAP", dl)
	p.Legend.Top = true
	return p.Save(6*vg.Inch, 4*vg.Inch, path)
}
