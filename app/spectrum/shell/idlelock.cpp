// SPDX-License-Identifier: Apache-2.0
#include "shell/idlelock.h"

#include <QApplication>
#include <QEvent>
#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QScreen>
#include <QToolTip>
#include <QVBoxLayout>
#include <QWidget>

namespace spectrum {

namespace {

/// What a person does: a key, a click, the wheel, the mouse moving, a touch, a drop.
bool isInput(QEvent::Type type)
{
    switch (type) {
    case QEvent::KeyPress:
    case QEvent::KeyRelease:
    case QEvent::ShortcutOverride:
    case QEvent::MouseButtonPress:
    case QEvent::MouseButtonRelease:
    case QEvent::MouseButtonDblClick:
    case QEvent::MouseMove:
    case QEvent::Wheel:
    case QEvent::TouchBegin:
    case QEvent::TouchUpdate:
    case QEvent::TabletPress:
    case QEvent::ContextMenu:
    case QEvent::InputMethod:
    case QEvent::DragEnter:
    case QEvent::DragMove:
    case QEvent::Drop:
        return true;
    default:
        return false;
    }
}

const QColor kCoverColour(24, 26, 30);

} // namespace

IdleLock::IdleLock(QWidget *window)
    : QObject(window), m_window(window), m_title(new QLabel), m_detail(new QLabel), m_primary(new QPushButton), m_secondary(new QPushButton)
{
    auto *content = new QWidget;
    m_title->setObjectName(QStringLiteral("idleLockTitle"));
    m_detail->setObjectName(QStringLiteral("idleLockDetail"));
    m_primary->setObjectName(QStringLiteral("idleLockPrimary"));
    m_secondary->setObjectName(QStringLiteral("idleLockSecondary"));
    QFont big = m_title->font();
    big.setPointSizeF(big.pointSizeF() * 1.6);
    big.setBold(true);
    m_title->setFont(big);
    m_title->setAlignment(Qt::AlignCenter);
    m_detail->setAlignment(Qt::AlignCenter);
    m_detail->setWordWrap(true);
    m_detail->setFixedWidth(620);
    auto *buttons = new QHBoxLayout;
    buttons->addStretch();
    buttons->addWidget(m_primary);
    buttons->addWidget(m_secondary);
    buttons->addStretch();
    auto *layout = new QVBoxLayout(content);
    layout->addStretch();
    layout->addWidget(m_title);
    layout->addSpacing(12);
    // Centred by stretches (an aligned item would be given its one-line height, the wrapped lines cut off).
    auto *words = new QHBoxLayout;
    words->addStretch();
    words->addWidget(m_detail);
    words->addStretch();
    layout->addLayout(words);
    layout->addSpacing(20);
    layout->addLayout(buttons);
    layout->addStretch();
    m_secondary->hide();
    m_cover = makeCover(content);
    m_cover->setObjectName(QStringLiteral("idleLockCover"));

    m_timer.setSingleShot(true);
    connect(&m_timer, &QTimer::timeout, this, &IdleLock::idle);
    qApp->installEventFilter(this);
}

IdleLock::~IdleLock()
{
    qApp->removeEventFilter(this);
    delete m_cover;
    qDeleteAll(m_blanks);
}

QWidget *IdleLock::makeCover(QWidget *content)
{
    auto *cover = new QWidget(nullptr, Qt::Window | Qt::FramelessWindowHint | Qt::WindowStaysOnTopHint);
    cover->setWindowTitle(tr("Spectrum — locked"));
    cover->setWindowModality(Qt::ApplicationModal);
    cover->setAutoFillBackground(true);
    QPalette palette = cover->palette();
    palette.setColor(QPalette::Window, kCoverColour);
    palette.setColor(QPalette::WindowText, QColor(230, 230, 230));
    cover->setPalette(palette);
    auto *layout = new QVBoxLayout(cover);
    if (content)
        layout->addWidget(content);
    return cover;
}

bool IdleLock::isCover(const QWidget *widget) const
{
    const QWidget *top = widget ? widget->window() : nullptr;
    return top && (top == m_cover || m_blanks.contains(const_cast<QWidget *>(top)));
}

void IdleLock::setIdleTime(int ms)
{
    m_idleMs = ms;
    if (ms > 0)
        m_timer.start(ms);
    else
        m_timer.stop();
}

void IdleLock::placeCovers()
{
    QScreen *home = m_window->screen() ? m_window->screen() : QGuiApplication::primaryScreen();
    // The window's screen, and all of the window where it reaches past it.
    m_cover->setGeometry(home ? home->geometry().united(m_window->frameGeometry()) : m_window->frameGeometry());
    const QList<QScreen *> screens = QGuiApplication::screens();
    while (m_blanks.size() < screens.size() - 1)
        m_blanks << makeCover(nullptr);
    int i = 0;
    for (QScreen *screen : screens) {
        if (screen != home && i < m_blanks.size())
            m_blanks.at(i++)->setGeometry(screen->geometry());
    }
}

void IdleLock::lock()
{
    if (m_idleMs > 0)
        m_timer.start(m_idleMs);
    if (m_locked)
        return;
    m_locked = true;
    // A menu or a tooltip open now would float above the cover.
    while (QWidget *popup = QApplication::activePopupWidget()) {
        if (!popup->close())
            break;
    }
    QToolTip::hideText();
    placeCovers();
    for (QWidget *blank : std::as_const(m_blanks))
        blank->show();
    m_cover->show();
    m_cover->raise();
    m_cover->activateWindow();
    m_primary->setFocus();
}

void IdleLock::unlock(bool restore)
{
    if (!m_locked)
        return;
    m_locked = false;
    m_cover->hide();
    for (QWidget *blank : std::as_const(m_blanks))
        blank->hide();
    for (const QPointer<QWidget> &w : std::exchange(m_heldBack, {})) {
        if (!w)
            continue;
        if (restore)
            w->show();
        else
            w->close();
    }
    m_window->activateWindow();
    if (m_idleMs > 0)
        m_timer.start(m_idleMs);
}

void IdleLock::setText(const QString &title, const QString &detail)
{
    m_title->setText(title);
    m_detail->setText(detail);
}

bool IdleLock::eventFilter(QObject *watched, QEvent *event)
{
    if (m_idleMs > 0 && isInput(event->type()))
        m_timer.start(m_idleMs);  // counted again from this input
    if (!m_locked)
        return false;
    // Locked: a shortcut acts on nothing (the cover has none), input reaches the covers alone, and a window that
    // would show itself (a report, a message) is held back until the cover goes.
    if (event->type() == QEvent::Shortcut)
        return true;
    if (!watched->isWidgetType())
        return false;
    auto *widget = static_cast<QWidget *>(watched);
    if (isInput(event->type()) && !isCover(widget))
        return true;
    if (event->type() == QEvent::Show && widget->isWindow() && !isCover(widget) && !(widget->windowType() == Qt::ToolTip)) {
        m_heldBack << widget;
        QMetaObject::invokeMethod(widget, [this, w = QPointer<QWidget>(widget)] {
            if (w && m_locked) {
                w->hide();
                m_cover->raise();
                m_cover->activateWindow();
            }
        }, Qt::QueuedConnection);
    }
    return false;
}

} // namespace spectrum
