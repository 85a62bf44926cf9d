package conformance

// The built-in lock systems, registered for the tests.
import _ "github.com/locklab/locklab/backends/builtin"
