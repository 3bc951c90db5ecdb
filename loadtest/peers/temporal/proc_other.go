//go:build !linux

package main

import "syscall"

// childAttr is nothing where there is no parent-death signal: a server
// left by a killed run must be stopped by hand.
func childAttr() *syscall.SysProcAttr { return nil }
