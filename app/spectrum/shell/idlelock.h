// SPDX-License-Identifier: Apache-2.0
#pragma once
// The reading room's lock (the hospital's "signIn": {"idleMinutes": N}): when no key, click, wheel turn or move of
// the mouse has reached the program for that long, idle() — the window then signs its readers out — and lock()
// raises a cover over every screen: a window of its own, frameless, above the others and modal to the whole
// application, so nothing beneath takes a key, a click, a drop or a shortcut, and windows that would appear while it
// is up are held back. Nothing beneath is closed or hidden: a dialog being filled in stays as it was, waiting. idle()
// comes again while locked (someone who signed in at the cover and walked away). The window decides when the cover
// goes, and whether what it held back comes back (the same reader) or is closed (another reader).

#include <QList>
#include <QObject>
#include <QPointer>
#include <QTimer>

class QLabel;
class QPushButton;
class QWidget;

namespace spectrum {

class IdleLock : public QObject
{
    Q_OBJECT
public:
    /// Watches the application's input; `window` is the program's main window (the cover's screen is its).
    explicit IdleLock(QWidget *window);
    ~IdleLock() override;

    /// After `ms` without input, idle() (0: never). Counts from now.
    void setIdleTime(int ms);
    int idleTime() const { return m_idleMs; }
    bool isLocked() const { return m_locked; }
    /// Covers every screen. Open menus and tooltips are closed (they would float above).
    void lock();
    /// Takes the cover away; the windows held back while locked are shown (`restore`) or closed.
    void unlock(bool restore = true);

    /// The cover's words: a title, then what to do.
    void setText(const QString &title, const QString &detail);
    /// The cover's main button ("Sign in…", "Show") and the second one (hidden until shown).
    QPushButton *primaryButton() const { return m_primary; }
    QPushButton *secondaryButton() const { return m_secondary; }
    /// The cover on the main window's screen (the one with the words and buttons).
    QWidget *cover() const { return m_cover; }
    /// Whether `widget` is part of a cover.
    bool isCover(const QWidget *widget) const;

Q_SIGNALS:
    /// The idle time ran out without input (locked or not).
    void idle();

protected:
    bool eventFilter(QObject *watched, QEvent *event) override;

private:
    QWidget *makeCover(QWidget *content);
    void placeCovers();

    QWidget *m_window;
    QWidget *m_cover;
    QList<QWidget *> m_blanks;  ///< the covers of the other screens
    QLabel *m_title;
    QLabel *m_detail;
    QPushButton *m_primary;
    QPushButton *m_secondary;
    QTimer m_timer;
    int m_idleMs = 0;
    bool m_locked = false;
    QList<QPointer<QWidget>> m_heldBack;  ///< windows that appeared while locked
};

} // namespace spectrum
