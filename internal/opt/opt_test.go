package opt

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestParsers(t *testing.T) {
	d, err := PositiveDuration("2s")
	assert.NoError(t, err)
	assert.Equal(t, 2*time.Second, d)
	_, err = PositiveDuration("0s")
	assert.ErrorContains(t, err, "positive")
	_, err = NonNegativeDuration("-1s")
	assert.ErrorContains(t, err, "negative")
	n, err := IntIn("3", 0, 5)
	assert.NoError(t, err)
	assert.Equal(t, 3, n)
	_, err = IntIn("7", 0, 5)
	assert.ErrorContains(t, err, "0..5")
	_, err = IntIn("x", 0, 5)
	assert.ErrorContains(t, err, "not an integer")
	f, err := FloatIn("0.5", 0, 1)
	assert.NoError(t, err)
	assert.Equal(t, 0.5, f)
	_, err = FloatIn("2", 0, 1)
	assert.ErrorContains(t, err, "0..1")
	type colour string
	c, err := OneOf("red", colour("red"), colour("blue"))
	assert.NoError(t, err)
	assert.Equal(t, colour("red"), c)
	_, err = OneOf("green", colour("red"), colour("blue"))
	assert.ErrorContains(t, err, "want one of red, blue")
	ns, err := Ints("3, 2", 1, 9)
	assert.NoError(t, err)
	assert.Equal(t, []int{3, 2}, ns)
	_, err = Ints("3,0", 1, 9)
	assert.ErrorContains(t, err, `"0"`)
}

func FuzzInts(f *testing.F) {
	f.Add("3,2")
	f.Add(" 1 ,x")
	f.Fuzz(func(t *testing.T, s string) {
		ns, err := Ints(s, 1, 9)
		if err == nil {
			for _, n := range ns {
				if n < 1 || n > 9 {
					t.Fatalf("%q gave %d out of range", s, n)
				}
			}
		}
	})
}
