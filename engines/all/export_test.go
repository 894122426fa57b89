package all

// SimulatedForTest returns a value of the type a configured fake engine has.
func SimulatedForTest() any { return simulated{} }
