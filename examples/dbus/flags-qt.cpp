// Reads Pushwoosh feature flags from pwflagsd over D-Bus with QtDBus, then prints each change: the Qt twin of
// flags.py, with no generated code and no library of ours.
//
//   flags-qt [--address ADDRESS] [--changes N] [KEY]
//
// KEY defaults to new_checkout (a flag of the demo set). Without --address it uses the system bus. With --changes
// N it exits after N Changed signals (0, the default: it only reads). Built on Debian with qtbase5-dev:
//
//   /usr/lib/qt5/bin/moc flags-qt.cpp -o flags-qt.moc
//   g++ -std=c++17 -fPIC flags-qt.cpp -o flags-qt $(pkg-config --cflags --libs Qt5DBus)
#include <QCoreApplication>
#include <QDBusArgument>
#include <QDBusConnection>
#include <QDBusInterface>
#include <QDBusMessage>
#include <QDBusReply>
#include <QDBusVariant>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QStringList>
#include <QTextStream>

static const QString service = QStringLiteral("io.github.pwflagsd.Flags1");
static const QString path = QStringLiteral("/io/github/pwflagsd/Flags1");
static const QString interface = QStringLiteral("io.github.pwflagsd.Flags1");

static QJsonValue plain(const QVariant &value);

// A nested value: an a{sv} (a JSON object) or an av (a JSON array), each member a variant.
static QJsonValue plain(const QDBusArgument &argument) {
    if (argument.currentType() == QDBusArgument::MapType) {
        QJsonObject object;
        argument.beginMap();
        while (!argument.atEnd()) {
            QString key;
            QDBusVariant member;
            argument.beginMapEntry();
            argument >> key >> member;
            argument.endMapEntry();
            object.insert(key, plain(member.variant()));
        }
        argument.endMap();
        return object;
    }
    QJsonArray array;
    argument.beginArray();
    while (!argument.atEnd()) {
        QDBusVariant member;
        argument >> member;
        array.append(plain(member.variant()));
    }
    argument.endArray();
    return array;
}

// A property's D-Bus value as JSON: strings, doubles and booleans as they are, dictionaries and arrays nested.
static QJsonValue plain(const QVariant &value) {
    if (value.userType() == qMetaTypeId<QDBusArgument>()) return plain(value.value<QDBusArgument>());
    if (value.userType() == qMetaTypeId<QDBusVariant>()) return plain(value.value<QDBusVariant>().variant());
    return QJsonValue::fromVariant(value);
}

// One value as compact JSON text (QJsonDocument writes only objects and arrays: the value goes in one).
static QString text(const QJsonValue &value) {
    QString array = QString::fromUtf8(QJsonDocument(QJsonArray{value}).toJson(QJsonDocument::Compact));
    return array.mid(1, array.size() - 2);
}

// Prints `prefix + name = value` for each property, in name order.
static void printProperties(QTextStream &out, const QString &prefix, const QVariantMap &properties) {
    for (auto item = properties.constBegin(); item != properties.constEnd(); ++item)
        out << "  " << prefix << item.key() << " = " << text(plain(item.value())) << "\n";
}

// Receives Changed(t revision, a(sbsa{sv}s) changed, as removed) and quits after `left` of them.
class ChangePrinter : public QObject {
    Q_OBJECT

public:
    explicit ChangePrinter(int left) : left(left) {}

public slots:
    void changed(const QDBusMessage &message) {
        QTextStream out(stdout);
        const QList<QVariant> arguments = message.arguments();
        const qulonglong revision = arguments.value(0).toULongLong();
        const QDBusArgument flags = arguments.value(1).value<QDBusArgument>();
        const QStringList removed = arguments.value(2).toStringList();
        QStringList keys;
        QList<QPair<QString, QVariantMap>> properties;
        flags.beginArray();
        while (!flags.atEnd()) {
            QString key, ruleId, json;
            bool enabled = false;
            QVariantMap flagProperties;
            flags.beginStructure();
            flags >> key >> enabled >> ruleId >> flagProperties >> json;
            flags.endStructure();
            keys << key;
            properties << qMakePair(key, flagProperties);
        }
        flags.endArray();
        out << "revision " << revision << ": changed " << (keys.isEmpty() ? "-" : keys.join(" ")) << "; removed "
            << (removed.isEmpty() ? "-" : removed.join(" ")) << "\n";
        for (const auto &flag : properties) printProperties(out, flag.first + ".", flag.second);
        out.flush();
        if (--left == 0) QCoreApplication::quit();
    }

private:
    int left;
};

int main(int argc, char **argv) {
    QCoreApplication app(argc, argv);
    QTextStream out(stdout), err(stderr);
    QString address, key = QStringLiteral("new_checkout");
    int changes = 0;
    const QStringList arguments = app.arguments();
    for (int index = 1; index < arguments.size(); index++) {
        if (arguments[index] == "--address" && index + 1 < arguments.size())
            address = arguments[++index];
        else if (arguments[index] == "--changes" && index + 1 < arguments.size())
            changes = arguments[++index].toInt();
        else
            key = arguments[index];
    }

    QDBusConnection bus = address.isEmpty() ? QDBusConnection::systemBus()
                                            : QDBusConnection::connectToBus(address, QStringLiteral("pwflagsd"));
    if (!bus.isConnected()) {
        err << "flags-qt: cannot connect to the bus: " << bus.lastError().message() << "\n";
        return 1;
    }
    QDBusInterface flags(service, path, interface, bus);
    const QDBusMessage reply = flags.call(QStringLiteral("Get"), key);
    if (reply.type() == QDBusMessage::ErrorMessage) {
        err << "flags-qt: " << reply.errorName() << ": " << reply.errorMessage() << "\n";
        return 1;
    }
    // found, enabled, rule_id, properties (a{sv}), the flag's JSON text
    const QList<QVariant> flag = reply.arguments();
    if (!flag.value(0).toBool()) {
        out << key << ": not found\n";
    } else {
        out << key << ": " << (flag.value(1).toBool() ? "enabled" : "disabled") << " (rule "
            << flag.value(2).toString() << ")\n";
        QVariantMap properties;
        flag.value(3).value<QDBusArgument>() >> properties;
        printProperties(out, QString(), properties);
    }
    const QDBusReply<bool> search = flags.call(QStringLiteral("IsEnabled"), QStringLiteral("search_v2"), false);
    out << "search_v2 enabled: " << (search.isValid() && search.value() ? "true" : "false") << "\n";
    out.flush();
    if (changes <= 0) return 0;

    ChangePrinter printer(changes);
    // The service (the daemon's well-known name) is the sender match: any client may send a signal with the
    // daemon's path and interface, and QtDBus delivers only those whose sender owns the name now (it asks the bus
    // for the owner and follows NameOwnerChanged, so a restarted daemon is heard again).
    if (!bus.connect(service, path, interface, QStringLiteral("Changed"), &printer, SLOT(changed(QDBusMessage)))) {
        err << "flags-qt: cannot subscribe to Changed: " << bus.lastError().message() << "\n";
        return 1;
    }
    // Subscribed: a change from now on is heard (a program that must not miss one reads GetAll after this).
    out << "listening\n";
    out.flush();
    return app.exec();
}

#include "flags-qt.moc"
