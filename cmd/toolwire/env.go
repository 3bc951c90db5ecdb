package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/toolwire/toolwire/tool"
)

// The environment variables toolwire reads. Only this package reads the
// environment; the libraries are told what it says through their
// configuration, so that a program linking them is never steered by a
// variable it did not set.
const (
	// envMaxConcurrency overrides the per-turn concurrency limit the router
	// gives turns that set none.
	envMaxConcurrency = "TOOLWIRE_MAX_TOOL_USE_CONCURRENCY"
	// envToolSearch overrides the configuration file's tool_search.
	envToolSearch = "TOOLWIRE_TOOL_SEARCH"
)

// maxConcurrency is the flag's value, else the environment's, else 0 (the
// router's default, as 0 in the environment is); a value in the environment
// that is not an integer of 0 or more is an error naming the variable.
func maxConcurrency(flag int) (int, error) {
	if flag > 0 {
		return flag, nil
	}
	v := os.Getenv(envMaxConcurrency)
	if v == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("%s=%q: want 0 or more", envMaxConcurrency, v)
	}
	return n, nil
}

// searchModeFromEnv is the tool search mode the environment sets, nil when
// it is unset or blank; a bad value is an error naming the variable.
func searchModeFromEnv() (*tool.SearchMode, error) {
	v, ok := os.LookupEnv(envToolSearch)
	if !ok || strings.TrimSpace(v) == "" {
		return nil, nil
	}
	m, err := tool.ParseSearchMode(v)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", envToolSearch, err)
	}
	return &m, nil
}
