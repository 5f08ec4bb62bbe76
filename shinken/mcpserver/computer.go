package mcpserver

func (s *Server) addComputerTools() {}
