package guard

import "syscall"

func stampOfStat(st *syscall.Stat_t) stamp {
	return stamp{
		dev: uint64(st.Dev), ino: uint64(st.Ino), size: uint64(st.Size),
		mtime: int64(st.Mtim.Sec), mtimeN: int64(st.Mtim.Nsec),
		ctime: int64(st.Ctim.Sec), ctimeN: int64(st.Ctim.Nsec),
		cacheable: true,
	}
}
