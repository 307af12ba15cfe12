package keyspace

import "testing"

// Every site's generation token is told apart from memory, and nothing else.
func TestIsGeneration(t *testing.T) {
	for _, k := range [][]byte{LessonGen("-"), FactGen("a.com"), SelectorGen("a.com"), SessionGen("a.com"), TrajectoryGen("a.com")} {
		if !IsGeneration(k) {
			t.Errorf("%s is a generation token", k)
		}
	}
	for _, k := range [][]byte{Fact("a.com", "a.com", "flow", "gen", "0123456789abcdef"), []byte("site/a.com/trajectory/idx/gen"), []byte("meta/schema")} {
		if IsGeneration(k) {
			t.Errorf("%s is not a generation token", k)
		}
	}
}
