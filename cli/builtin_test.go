package cli

// The command's tests run the locklab command as cmd/locklab builds it:
// with the built-in systems' live forms.
import _ "github.com/locklab/locklab/backends/builtin"
