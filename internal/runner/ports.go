package runner

import "net"

// FreePorts asks the kernel for n distinct free loopback ports, holding each
// until all are chosen (a port closed at once may be handed out again).
// Another process may take one before its server binds it; the server then
// fails to start and says so.
func FreePorts(n int) ([]int, error) {
	var ports []int
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		defer l.Close()
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}
