using System.Text;

namespace System.MP.Transport;

/// <summary>Type names and exceptions of the serializer's messages.</summary>
internal static class TransportErrors
{
    internal static TransportException Malformed(string detail) => new(SR.Format(SR.PayloadMalformed, detail));

    /// <summary>A chunked payload its sender gave up after the first message (PayloadChannel.Abandon).</summary>
    internal static TransportException Abandoned(long received, long announced) =>
        new(SR.Format(SR.PayloadAbandoned, received, announced));

    /// <summary>A readable type name for messages (C#-like, with generic arguments).</summary>
    internal static string Name(Type t)
    {
        if (t.IsArray)
            return Name(t.GetElementType()!) + "[" + new string(',', t.GetArrayRank() - 1) + "]";
        if (!t.IsGenericType)
            return t.FullName ?? t.Name;
        var sb = new StringBuilder();
        string def = t.GetGenericTypeDefinition().FullName ?? t.Name;
        int tick = def.IndexOf('`', StringComparison.Ordinal);
        sb.Append(tick < 0 ? def : def[..tick]).Append('<');
        Type[] args = t.GetGenericArguments();
        for (int i = 0; i < args.Length; i++)
            sb.Append(i == 0 ? "" : ", ").Append(t.IsGenericTypeDefinition ? "" : Name(args[i]));
        return sb.Append('>').ToString();
    }
}
