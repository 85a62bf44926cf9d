package engine

import (
	"regexp"
	"sort"
)

func regexpMust(s string) *regexp.Regexp { return regexp.MustCompile(s) }

func sortStrings(s []string) { sort.Strings(s) }
