package concept

import (
	"errors"
	"fmt"
	"image/color"
	"math"
	"os"
	"path/filepath"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"
)

// PlotCurve draws a training curve: the loss of each phase (top) and the
// held-out map@10 (bottom), against the step count across phases. The
// format follows the file extension: .svg, otherwise PNG.
func PlotCurve(path, title string, curve []Iteration) error {
	if len(curve) == 0 {
		return errors.New("concept: empty training curve")
	}
	for _, it := range curve {
		// An infinite value would make the axis range infinite, which
		// gonum/plot panics on.
		if math.IsNaN(it.Loss) || math.IsInf(it.Loss, 0) || math.IsInf(it.DevMAP, 0) {
			return fmt.Errorf("concept: training curve: step %d (%s) has loss %v, held-out MAP %v; nothing to plot", it.Iter, it.Phase, it.Loss, it.DevMAP)
		}
	}
	loss := plot.New()
	loss.Title.Text = title
	loss.Y.Label.Text = "training loss"
	dev := plot.New()
	dev.X.Label.Text = "step (iterations / epochs, all phases)"
	dev.Y.Label.Text = "held-out MAP"
	var phases []string
	byPhase := map[string]plotter.XYs{}
	var devXY plotter.XYs
	for i, it := range curve {
		if _, ok := byPhase[it.Phase]; !ok {
			phases = append(phases, it.Phase)
		}
		byPhase[it.Phase] = append(byPhase[it.Phase], plotter.XY{X: float64(i), Y: it.Loss})
		if !math.IsNaN(it.DevMAP) {
			devXY = append(devXY, plotter.XY{X: float64(i), Y: it.DevMAP})
		}
	}
	for i, ph := range phases {
		l, err := plotter.NewLine(byPhase[ph])
		if err != nil {
			return err
		}
		l.Color = plotutil.Color(i)
		loss.Add(l)
		loss.Legend.Add(ph, l)
	}
	loss.Legend.Top = true
	loss.Add(plotter.NewGrid())
	if len(devXY) > 0 {
		l, pts, err := plotter.NewLinePoints(devXY)
		if err != nil {
			return err
		}
		l.Color, pts.Color = color.Black, color.Black
		dev.Add(l, pts, plotter.NewGrid())
	}
	w, h := 7*vg.Inch, 6*vg.Inch
	var canvas vg.CanvasSizer
	svg := strings.EqualFold(filepath.Ext(path), ".svg")
	if svg {
		canvas = vgsvg.New(w, h)
	} else {
		canvas = vgimg.New(w, h)
	}
	dc := draw.New(canvas)
	tiles := draw.Tiles{Rows: 2, Cols: 1, PadY: vg.Points(6), PadX: vg.Points(6), PadTop: vg.Points(4), PadBottom: vg.Points(4), PadLeft: vg.Points(4), PadRight: vg.Points(4)}
	cs := plot.Align([][]*plot.Plot{{loss}, {dev}}, tiles, dc)
	loss.Draw(cs[0][0])
	dev.Draw(cs[1][0])
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	var werr error
	if svg {
		_, werr = canvas.(*vgsvg.Canvas).WriteTo(f)
	} else {
		_, werr = vgimg.PngCanvas{Canvas: canvas.(*vgimg.Canvas)}.WriteTo(f)
	}
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	return werr
}
