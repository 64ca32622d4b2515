// GNOME Shell 43 and 44: an extension is a script whose init() returns what enables it.
const {Gio} = imports.gi;
const Main = imports.ui.main;

/*CORE*/

function init() {
    return roundhouseService(Gio, Main);
}
