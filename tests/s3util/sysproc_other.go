//go:build !linux

package s3util

import "syscall"

func sysProcAttr() *syscall.SysProcAttr { return nil }
