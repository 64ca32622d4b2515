// GNOME Shell 45 and later: an extension is a module whose default export is the extension.
import Gio from 'gi://Gio';
import * as Main from 'resource:///org/gnome/shell/ui/main.js';
import {Extension} from 'resource:///org/gnome/shell/extensions/extension.js';

/*CORE*/

export default class RoundhouseWindows extends Extension {
    enable() {
        this._service = roundhouseService(Gio, Main);
        this._service.enable();
    }

    disable() {
        this._service?.disable();
        this._service = null;
    }
}
