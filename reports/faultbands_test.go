package reports

import (
	"fmt"
	"image/color"
	"math"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/history"
)

// hexColor is a colour as gonum's SVG canvas writes a fill ("#7D55C8").
func hexColor(c color.NRGBA) string { return fmt.Sprintf("#%02X%02X%02X", c.R, c.G, c.B) }

// over composites c (with its opacity) over the opaque colour under.
func over(c, under color.NRGBA) color.NRGBA {
	a := float64(c.A) / 255
	mix := func(x, y uint8) uint8 { return uint8(math.Round(float64(x)*a + float64(y)*(1-a))) }
	return color.NRGBA{mix(c.R, under.R), mix(c.G, under.G), mix(c.B, under.B), 255}
}

// reddish reports whether a reader could take c for the overlap's red: red
// well above both green and blue.
func reddish(c color.NRGBA) bool {
	return int(c.R)-int(max(c.G, c.B)) > 60
}

// faultKinds are the fault kinds the nemesis injects.
var faultKinds = []string{"pause", "partition", "clock-jump", "clock-drift", "crash", "delay", "lock-delay"}

// TestNoFaultShadingLooksLikeAnOverlap: the overlap of two holders is red;
// no fault kind is shaded in a reddish colour, and since the faults of one
// kind on one lane are merged into one band, a lane holds at most one layer
// per kind: every mix of kinds, over every lane ground, stays clear of red.
func TestNoFaultShadingLooksLikeAnOverlap(t *testing.T) {
	require.True(t, reddish(overlapColor), "the overlap's red is what reddish detects")
	grounds := []color.NRGBA{{255, 255, 255, 255}, alpha(color.NRGBA{245, 245, 245, 0}, 255), alpha(color.NRGBA{236, 236, 236, 0}, 255)}
	for _, opacity := range []uint8{90, 38} { // a timeline row, a latency plot
		for set := 1; set < 1<<len(faultKinds); set++ {
			for _, g := range grounds {
				c := g
				var kinds []string
				for i, k := range faultKinds {
					if set&(1<<i) != 0 {
						c = over(alpha(faultColor(k), opacity), c)
						kinds = append(kinds, k)
					}
				}
				assert.False(t, reddish(c), "%s stacked at opacity %d over %v give %v", strings.Join(kinds, "+"), opacity, g, c)
			}
		}
	}
	for _, k := range faultKinds {
		assert.False(t, reddish(over(alpha(shade(faultColor(k), -0.2), 220), color.NRGBA{255, 255, 255, 255})), "the start line of a %s", k)
	}
}

// stackedPauses is five clients taking turns for a minute, with c2 paused n
// times between 20 s and 30 s (the pauses overlap, their union is 20-30 s),
// and c1 and c3 both believing they hold the lock from 40 s.
func stackedPauses(n int) []history.Event {
	var b historyBuilder
	for i := range 5 {
		node := fmt.Sprintf("c%d", i+1)
		for s := 0; s < 60; s += 10 {
			at := float64(s*1000 + i*1500 + 100)
			b.op(i, node, history.FAcquire, at, at+10, history.OK, history.Event{Owner: node, Deadline: history.Ptr(ms(at + 5000))})
			b.op(i, node, history.FRelease, at+1000, at+1010, history.OK, history.Event{Owner: node})
		}
	}
	b.op(0, "c1", history.FAcquire, 40000, 40010, history.OK, history.Event{Owner: "c1", Deadline: history.Ptr(ms(45000))})
	b.op(2, "c3", history.FAcquire, 40500, 40510, history.OK, history.Event{Owner: "c3", Deadline: history.Ptr(ms(45500))})
	b.op(0, "c1", history.FRelease, 42000, 42010, history.OK, history.Event{Owner: "c1"})
	b.op(2, "c3", history.FRelease, 42500, 42510, history.OK, history.Event{Owner: "c3"})
	for i := range n {
		b.fault("pause", []string{"c2"}, float64(20000+500*i), float64(30000-700*i))
	}
	b.op(0, "c1", history.FRead, 59990, 60000, history.OK, history.Event{Value: history.Ptr[int64](0)})
	return b.build()
}

// TestOverlappingPausesRenderLikeOnePause: one, two or five overlapping
// pauses of c2 shade its row with one band of one colour, the same as a
// single pause over their union (a thin line marks each pause's start), and
// shade the latency and throughput plots with one band each; no fault is
// drawn in the overlap's red at any depth.
func TestOverlappingPausesRenderLikeOnePause(t *testing.T) {
	pause := faultColor("pause")
	red := hexColor(overlapColor)
	type band struct{ x0, x1 float64 }
	var first map[string][]band
	for _, n := range []int{1, 2, 5} {
		t.Run(fmt.Sprintf("%d pauses", n), func(t *testing.T) {
			ps, err := RenderPlots(stackedPauses(n))
			require.NoError(t, err)
			got := map[string][]band{}
			for _, p := range ps {
				shapes, _ := parseSVG(t, p.SVG)
				var overlaps, starts int
				for _, s := range shapes {
					switch {
					case s.fill == red && !s.translucent:
						overlaps++
					case s.fill == red || reddish(over(alpha(parseHex(t, s.fill), uint8(math.Round(s.opacity*255))), color.NRGBA{255, 255, 255, 255})) && s.translucent:
						t.Errorf("%s: a translucent shape in a reddish %s (opacity %.2f)", p.Name, s.fill, s.opacity)
					case s.translucent && s.x1-s.x0 > 3 && near(t, s.fill, pause) && math.Abs(s.opacity-60.0/255) > 0.01: // not the legend's swatch
						got[p.Name] = append(got[p.Name], band{s.x0, s.x1})
					case s.translucent && near(t, s.fill, shade(pause, -0.2)) && s.x1-s.x0 <= 1:
						starts++
					}
				}
				if p.Name == TimelinePlot {
					assert.Positive(t, overlaps, "the overlap of c1 and c3 is drawn in red")
					assert.Equal(t, n, starts, "a line at each pause's start")
				}
				if p.Name != OverlapTimelinePlot { // the close-up is after the pauses
					assert.Len(t, got[p.Name], 1, "%s: one band for %d overlapping pauses", p.Name, n)
				}
			}
			if first == nil {
				first = got
				return
			}
			for name, bands := range got {
				require.Len(t, first[name], 1)
				for _, b := range bands {
					assert.InDelta(t, first[name][0].x0, b.x0, 0.01, "%s: the band starts where the first pause does", name)
					assert.InDelta(t, first[name][0].x1, b.x1, 0.01, "%s: the band ends where the union ends", name)
				}
			}
		})
	}
}

// near reports whether an SVG fill is colour c: gonum writes a translucent
// colour premultiplied and back, a unit or two off.
func near(t *testing.T, fill string, c color.NRGBA) bool {
	f := parseHex(t, fill)
	d := func(a, b uint8) bool { return math.Abs(float64(a)-float64(b)) <= 3 }
	return f.A != 0 && d(f.R, c.R) && d(f.G, c.G) && d(f.B, c.B)
}

// parseHex reads "#RRGGBB".
func parseHex(t *testing.T, s string) color.NRGBA {
	t.Helper()
	var c color.NRGBA
	if _, err := fmt.Sscanf(s, "#%02X%02X%02X", &c.R, &c.G, &c.B); err != nil {
		return color.NRGBA{}
	}
	c.A = 255
	return c
}

// TestFaultLabelsNeverCrowd: the latency and throughput plots shade a band
// per node a fault hit (a node's overlapping faults one band) and label each
// band once ("2 pauses: redis"), in a strip of two lines above the data
// area, within it, starting inside their band and never over another label
// of their line; a band with no room for its label before the next band
// starts (the pauses of c2 to c6, each followed 0.2 s later by the next
// one's; a short pause at the very end) gets none. The
// timeline's lanes label each band of overlapping faults once.
func TestFaultLabelsNeverCrowd(t *testing.T) {
	var b historyBuilder
	for i := range 60 {
		at := float64(i * 1000)
		b.op(0, "c1", history.FAcquire, at, at+5, history.OK, history.Event{Owner: "c1"})
		b.op(0, "c1", history.FRelease, at+500, at+505, history.OK, history.Event{Owner: "c1"})
	}
	for i := range 6 {
		b.fault("pause", []string{fmt.Sprintf("c%d", i+2)}, float64(10000+200*i), float64(14000+200*i))
	}
	b.fault("pause", []string{"c3"}, 30000, 40000)
	b.fault("pause", []string{"redis"}, 44000, 46000)
	b.fault("pause", []string{"redis"}, 45000, 48000)
	b.fault("pause", []string{"c2"}, 59200, 59900)
	ps, err := RenderPlots(b.build())
	require.NoError(t, err)
	pauseLabel := regexp.MustCompile(`^(pause|\d+ pauses)\b`)
	for _, p := range ps {
		shapes, texts := parseSVG(t, p.SVG)
		var labels []svgText
		for _, tx := range texts {
			if pauseLabel.MatchString(tx.text) && tx.size != 9.5 { // not the legend's entry
				labels = append(labels, tx)
			}
		}
		if p.Name == TimelinePlot {
			// c2 to c7 and redis ran no operations: each gets a lane.
			perLane := map[float64][]string{}
			for _, l := range labels {
				perLane[l.y] = append(perLane[l.y], l.text)
			}
			assert.Len(t, perLane, 7, "one label on each lane: c2, c3 (twice paused, with room), c4 to c7, redis")
			assert.Contains(t, perLane, labels[len(labels)-1].y)
			assert.Equal(t, []string{"2 pauses"}, perLane[labels[len(labels)-1].y], "redis's lane labels its band of two pauses once")
			continue
		}
		if p.Name == OverlapTimelinePlot {
			continue
		}
		left, right, top := math.Inf(1), math.Inf(-1), math.Inf(-1)
		var bands [][2]float64
		for _, s := range shapes {
			if s.translucent && near(t, s.fill, faultColor("pause")) && math.Abs(s.opacity-60.0/255) > 0.01 { // not the legend's swatch
				bands = append(bands, [2]float64{s.x0, s.x1})
				top = math.Max(top, s.y1)
			}
			if s.stroke == "#E1E1E1" { // the grid spans the data area
				left, right = math.Min(left, s.x0), math.Max(right, s.x1)
			}
		}
		require.Len(t, bands, 9, "%s: a band per node: c2 to c7 from 10 s, c3 at 30-40 s, redis at 44-48 s (its two pauses one band), c2 at 59.2 s", p.Name)
		var texts2 []string
		for _, l := range labels {
			texts2 = append(texts2, l.text)
		}
		assert.Equal(t, []string{"pause c7", "pause c3", "2 pauses: redis"}, texts2, "%s: a label per band where it has room", p.Name)
		for i, l := range labels {
			w := float64(textStyle(l.size, nil).Width(l.text))
			assert.Greater(t, l.y, top, "%s: %q sits above the data area", p.Name, l.text)
			assert.GreaterOrEqual(t, l.x, left, p.Name)
			assert.LessOrEqual(t, l.x+w, right+0.5, "%s: %q ends at %.1f, past the data area (%.1f)", p.Name, l.text, l.x+w, right)
			inside := false
			for _, bd := range bands {
				inside = inside || (l.x >= bd[0] && l.x < bd[1])
			}
			assert.True(t, inside, "%s: %q starts inside its band", p.Name, l.text)
			for _, prev := range labels[:i] {
				if prev.y == l.y {
					assert.Greater(t, l.x, prev.x+float64(textStyle(prev.size, nil).Width(prev.text)), "%s: labels on one line overlap", p.Name)
				}
			}
		}
	}
}
