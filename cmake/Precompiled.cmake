# SPDX-License-Identifier: Apache-2.0
# Precompiled headers: the Qt and standard headers most of our files include, parsed once per library instead of
# once per file (about half of a file's compile time was parsing Qt's headers). Each library precompiles the tier
# of headers its Qt modules allow; the test suites share two precompiled headers (one for the suites without a
# GUI, one for those with widgets), as their compile flags are the same within each group. They only speed the
# build: every file still includes what it uses, and SPECTRUM_PRECOMPILED_HEADERS=OFF builds without them.
option(SPECTRUM_PRECOMPILED_HEADERS "Precompile the common Qt and standard headers" ON)

set(SPECTRUM_PCH_CORE
  <algorithm> <cmath> <cstring> <functional> <memory> <optional> <utility> <vector>
  <QByteArray> <QDateTime> <QDir> <QElapsedTimer> <QFile> <QFileInfo> <QHash> <QJsonArray> <QJsonDocument>
  <QJsonObject> <QList> <QMutex> <QObject> <QPointer> <QRegularExpression> <QSet> <QString> <QStringList>
  <QThread> <QThreadPool> <QTimer> <QUrl> <QVariant>)
set(SPECTRUM_PCH_NETWORK ${SPECTRUM_PCH_CORE}
  <QHostAddress> <QNetworkAccessManager> <QNetworkReply> <QNetworkRequest> <QSslConfiguration> <QTcpServer> <QTcpSocket>)
set(SPECTRUM_PCH_WIDGETS ${SPECTRUM_PCH_CORE}
  <QImage> <QPainter> <QApplication> <QComboBox> <QDialog> <QDialogButtonBox> <QFormLayout> <QHBoxLayout>
  <QLabel> <QLineEdit> <QPushButton> <QVBoxLayout> <QWidget>)
set(SPECTRUM_PCH_TEST <QProcess> <QScopeGuard> <QSignalSpy> <QTemporaryDir> <QTest>)

# spectrum_precompile(TARGET CORE|NETWORK|WIDGETS): TARGET precompiles that tier of headers.
function(spectrum_precompile target tier)
  if(SPECTRUM_PRECOMPILED_HEADERS)
    target_precompile_headers(${target} PRIVATE ${SPECTRUM_PCH_${tier}})
  endif()
endfunction()
