// Reads Pushwoosh feature flags from pwflagsd over D-Bus with QtDBus, then prints each change: the Qt twin of
// flags.py, with no generated code and no library of ours.
//
//   flags-qt [--address ADDRESS] [--changes N] [KEY]
//
// KEY defaults to new_checkout (a flag of the demo set). Without --address it uses the system bus. It waits for the
// daemon when it is not running. With --changes N it exits after N changes (0, the default: it only reads); a
// change made while the daemon was stopped counts as one, printed when the daemon is back. Built on Debian with
// qtbase5-dev:
//
//   /usr/lib/qt5/bin/moc flags-qt.cpp -o flags-qt.moc
//   g++ -std=c++17 -fPIC flags-qt.cpp -o flags-qt $(pkg-config --cflags --libs Qt5DBus)
#include <QCoreApplication>
#include <QDBusArgument>
#include <QDBusConnection>
#include <QDBusConnectionInterface>
#include <QDBusMessage>
#include <QDBusServiceWatcher>
#include <QDBusVariant>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QMap>
#include <QStringList>
#include <QTextStream>

static const QString service = QStringLiteral("io.github.pwflagsd.Flags1");
static const QString path = QStringLiteral("/io/github/pwflagsd/Flags1");
static const QString interface = QStringLiteral("io.github.pwflagsd.Flags1");
// The errors of a call that found no daemon: the next owner of the name is read instead.
static const QStringList noDaemon = {QStringLiteral("org.freedesktop.DBus.Error.ServiceUnknown"),
                                     QStringLiteral("org.freedesktop.DBus.Error.NameHasNoOwner"),
                                     QStringLiteral("org.freedesktop.DBus.Error.NoReply")};

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

// A flag as GetAll and Changed carry it, (s key, b enabled, s rule_id, a{sv} properties, s json): what is printed
// and the JSON text that tells whether it changed.
struct Flag {
    QString key;
    QVariantMap properties;
    QString json;
};

// The flags of an a(sbsa{sv}s).
static QList<Flag> flagsOf(const QDBusArgument &argument) {
    QList<Flag> flags;
    argument.beginArray();
    while (!argument.atEnd()) {
        Flag flag;
        QString ruleId;
        bool enabled = false;
        argument.beginStructure();
        argument >> flag.key >> enabled >> ruleId >> flag.properties >> flag.json;
        argument.endStructure();
        flags << flag;
    }
    argument.endArray();
    return flags;
}

// Prints KEY once the daemon serves, then each change of the flags: a Changed signal, or what differs after the
// daemon was away (read again when the name gets an owner). Quits after `left` changes.
class Follower : public QObject {
    Q_OBJECT

public:
    Follower(const QDBusConnection &bus, const QString &key, int left) : bus(bus), key(key), left(left) {}

public slots:
    // Reads now if the daemon is there (or the bus starts it), else waits for the name to get an owner.
    void start() {
        bus.interface()->startService(service); // D-Bus activation, where the bus has it (the package's system bus)
        if (bus.interface()->isServiceRegistered(service))
            read();
        else
            QTextStream(stderr) << "flags-qt: waiting for " << service << "\n";
    }

    // The name's owner changed: an owner that is not empty is a daemon (re)started.
    void ownerChanged(const QString &, const QString &, const QString &owner) {
        if (!owner.isEmpty()) read();
    }

    // Changed(t revision, a(sbsa{sv}s) changed, as removed).
    void changed(const QDBusMessage &message) {
        const qulonglong at = message.arguments().value(0).toULongLong();
        if (!haveRead || at <= revision) return; // the GetAll under way, or made already, holds it
        const QList<Flag> flags = flagsOf(message.arguments().value(1).value<QDBusArgument>());
        const QStringList removed = message.arguments().value(2).toStringList();
        revision = at;
        for (const Flag &flag : flags) held.insert(flag.key, flag.json);
        for (const QString &gone : removed) held.remove(gone);
        show(at, flags, removed);
    }

private:
    // The first time: prints KEY and search_v2. Then reads every flag, and prints what differs from `held`.
    void read() {
        QTextStream out(stdout);
        if (!haveRead) {
            QDBusMessage reply = call(QStringLiteral("Get"), {key});
            if (reply.type() == QDBusMessage::ErrorMessage) return failed(reply);
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
            reply = call(QStringLiteral("IsEnabled"), {QStringLiteral("search_v2"), false});
            if (reply.type() == QDBusMessage::ErrorMessage) return failed(reply);
            out << "search_v2 enabled: " << (reply.arguments().value(0).toBool() ? "true" : "false") << "\n";
            out.flush();
            if (left <= 0) return QCoreApplication::quit();
        }
        const QDBusMessage reply = call(QStringLiteral("GetAll"));
        if (reply.type() == QDBusMessage::ErrorMessage) return failed(reply);
        // epoch, revision, every flag
        const QList<Flag> flags = flagsOf(reply.arguments().value(2).value<QDBusArgument>());
        QMap<QString, QString> now;
        QList<Flag> changedFlags;
        for (const Flag &flag : flags) {
            now.insert(flag.key, flag.json);
            if (held.value(flag.key) != flag.json) changedFlags << flag;
        }
        QStringList removed;
        for (const QString &heldKey : held.keys())
            if (!now.contains(heldKey)) removed << heldKey;
        const bool first = !haveRead;
        held = now;
        revision = reply.arguments().value(1).toULongLong();
        haveRead = true;
        if (first) {
            // Subscribed, then read: a change from now on is heard.
            out << "listening\n";
            out.flush();
        } else if (!changedFlags.isEmpty() || !removed.isEmpty()) {
            show(revision, changedFlags, removed);
        }
    }

    QDBusMessage call(const QString &method, const QList<QVariant> &arguments = {}) {
        QDBusMessage message = QDBusMessage::createMethodCall(service, path, interface, method);
        message.setArguments(arguments);
        return bus.call(message);
    }

    // A daemon gone again is read when the name's next owner comes; any other error ends the program.
    void failed(const QDBusMessage &reply) {
        if (noDaemon.contains(reply.errorName())) return;
        QTextStream(stderr) << "flags-qt: " << reply.errorName() << ": " << reply.errorMessage() << "\n";
        QCoreApplication::exit(1);
    }

    void show(qulonglong at, const QList<Flag> &flags, const QStringList &removed) {
        QTextStream out(stdout);
        QStringList keys;
        for (const Flag &flag : flags) keys << flag.key;
        out << "revision " << at << ": changed " << (keys.isEmpty() ? "-" : keys.join(" ")) << "; removed "
            << (removed.isEmpty() ? "-" : removed.join(" ")) << "\n";
        for (const Flag &flag : flags) printProperties(out, flag.key + ".", flag.properties);
        out.flush();
        if (--left == 0) QCoreApplication::quit();
    }

    QDBusConnection bus;
    QString key;
    int left;
    QMap<QString, QString> held; // every flag's JSON text by key, as the last GetAll and the Changed since say
    qulonglong revision = 0;     // the revision `held` is at
    bool haveRead = false;       // true once GetAll answered
};

int main(int argc, char **argv) {
    QCoreApplication app(argc, argv);
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
        QTextStream(stderr) << "flags-qt: cannot connect to the bus: " << bus.lastError().message() << "\n";
        return 1;
    }
    Follower follower(bus, key, changes);
    // The service (the daemon's well-known name) is the sender match: any client may send a signal with the
    // daemon's path and interface, and QtDBus delivers only those whose sender owns the name now (it asks the bus
    // for the owner and follows NameOwnerChanged, so a restarted daemon is heard again).
    if (!bus.connect(service, path, interface, QStringLiteral("Changed"), &follower, SLOT(changed(QDBusMessage)))) {
        QTextStream(stderr) << "flags-qt: cannot subscribe to Changed: " << bus.lastError().message() << "\n";
        return 1;
    }
    // A new owner of the name is a daemon (re)started: the flags are read again, so a change made while it was
    // stopped is printed too.
    QDBusServiceWatcher watcher(service, bus, QDBusServiceWatcher::WatchForOwnerChange);
    QObject::connect(&watcher, &QDBusServiceWatcher::serviceOwnerChanged, &follower, &Follower::ownerChanged);
    QMetaObject::invokeMethod(&follower, &Follower::start, Qt::QueuedConnection);
    return app.exec();
}

#include "flags-qt.moc"
