package escouade

// execHeld says that a command plugin's program runs from the file held
// since its first start, as heldPath names it in the program's process.
const execHeld = true

// heldPath is the held program's name in its own process, where it is
// descriptor 3 (the first of exec.Cmd's ExtraFiles), read before exec
// runs it, and by a script's interpreter after.
const heldPath = "/proc/self/fd/3"
