package runner

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

// A driver is alive only as the same process: its pid with its start time.
func TestDriverAlive(t *testing.T) {
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	self := DriverID()
	_, start, _ := strings.Cut(self, ":")
	reused := strconv.Itoa(os.Getpid()) + ":" + start + "1" // this pid, another start
	for _, tc := range []struct {
		id   string
		want bool
	}{
		{self, true},
		{strconv.Itoa(os.Getpid()), true}, // a label from before start times
		{strconv.Itoa(dead.Process.Pid) + ":" + start, false},
		{reused, false},
		{"", false},
		{"x:1", false},
	} {
		if got := driverAlive(tc.id); got != tc.want {
			t.Errorf("driverAlive(%q) = %v; want %v", tc.id, got, tc.want)
		}
	}
	if orphaned(self, "") {
		t.Errorf("this driver's own children count as orphans")
	}
}
