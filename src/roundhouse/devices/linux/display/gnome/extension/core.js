// roundhouse's part inside GNOME Shell: the windows a person switches between, with their
// rectangles; activating and closing one; how many frames the stage has painted; the
// Shell's own dialogs that show. The same code serves Eval on a Shell in unsafe mode
// (roundhouse's virtual desktops) and the extension a person installs with `roundhouse
// setup gnome`, which exports these and nothing else (no Eval) as dev.roundhouse.Shell on
// the session bus.

function roundhouseShell(Main) {
    const KINDS = [0, 3, 4, 7];  // Meta.WindowType: NORMAL, DIALOG, MODAL_DIALOG, UTILITY
    let handler = 0;
    let painted = 0;
    const windows = () => global.get_window_actors().map(actor => actor.meta_window);
    const find = id => windows().find(w => String(w.get_id()) === id);
    return {
        windows() {
            const focus = global.display.focus_window;
            return windows()
                .filter(w => KINDS.includes(w.get_window_type()) && !w.is_override_redirect())
                .sort((a, b) => a.get_stable_sequence() - b.get_stable_sequence())
                .map(w => {
                    const f = w.get_frame_rect(), b = w.get_buffer_rect();
                    const actor = w.get_compositor_private();
                    return {
                        id: String(w.get_id()), title: w.get_title() || '',
                        wm_class: w.get_wm_class() || '', pid: w.get_pid(),
                        frame: [f.x, f.y, f.width, f.height],
                        buffer: [b.x, b.y, b.width, b.height], focus: w === focus,
                        shown: !!actor && actor.visible && !w.minimized && !w.is_hidden(),
                    };
                });
        },
        activate(id) {
            const w = find(id);
            if (!w) return false;
            Main.activateWindow(w);
            return true;
        },
        close(id) {
            const w = find(id);
            if (!w) return false;
            w.delete(global.get_current_time());
            return true;
        },
        frames() {
            if (!handler)
                handler = global.stage.connect('after-paint', () => { painted += 1; });
            return painted;
        },
        unwatch() {
            if (handler)
                global.stage.disconnect(handler);
            handler = 0;
        },
        // GNOME Shell's own modal dialogs that show (polkit's password, a portal's or the
        // session's question), each by its first label: a place where nothing is typed.
        dialogs() {
            const firstLabel = actor => {
                if (actor.constructor.$gtype?.name === 'StLabel' && actor.visible && actor.get_text())
                    return actor.get_text();
                for (const child of actor.get_children()) {
                    const found = firstLabel(child);
                    if (found)
                        return found;
                }
                return '';
            };
            return Main.layoutManager.modalDialogGroup.get_children()
                .filter(actor => actor.visible)
                .map(firstLabel);
        },
        // A virtual desktop's Shell: out of the Overview it starts in, and no banners (as
        // root it says "Logged in as a privileged user" over the top of the screen).
        prepare() {
            Main.messageTray.bannerBlocked = true;
            Main.overview.hide();
            return Main.overview.visible;
        },
    };
}

const ROUNDHOUSE_NAME = 'dev.roundhouse.Shell';
const ROUNDHOUSE_PATH = '/dev/roundhouse/Shell';
const ROUNDHOUSE_INTERFACE = `<node><interface name="dev.roundhouse.Shell1">
  <method name="Windows"><arg type="s" direction="out" name="json"/></method>
  <method name="Activate"><arg type="s" direction="in" name="id"/><arg type="b" direction="out"/></method>
  <method name="Close"><arg type="s" direction="in" name="id"/><arg type="b" direction="out"/></method>
  <method name="Frames"><arg type="u" direction="out"/></method>
  <method name="Prepare"><arg type="b" direction="out"/></method>
  <method name="Dialogs"><arg type="s" direction="out" name="json"/></method>
</interface></node>`;

// The extension: the service above exported while it is enabled, its name owned.
function roundhouseService(Gio, Main) {
    const shell = roundhouseShell(Main);
    let exported = null;
    let owner = 0;
    const service = {
        Windows: () => JSON.stringify(shell.windows()),
        Activate: id => shell.activate(id),
        Close: id => shell.close(id),
        Frames: () => shell.frames(),
        Prepare: () => shell.prepare(),
        Dialogs: () => JSON.stringify(shell.dialogs()),
    };
    return {
        enable() {
            exported = Gio.DBusExportedObject.wrapJSObject(ROUNDHOUSE_INTERFACE, service);
            exported.export(Gio.DBus.session, ROUNDHOUSE_PATH);
            owner = Gio.bus_own_name(Gio.BusType.SESSION, ROUNDHOUSE_NAME,
                Gio.BusNameOwnerFlags.NONE, null, null, null);
        },
        disable() {
            if (owner)
                Gio.bus_unown_name(owner);
            owner = 0;
            if (exported)
                exported.unexport();
            exported = null;
            shell.unwatch();
        },
    };
}
